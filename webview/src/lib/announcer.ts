/**
 * What the chat's polite live region says (components/Announcer.svelte shows it): the newest run
 * of the open thread, fed as a snapshot after each render, becomes a few announcements — the run's
 * status (thinking, waiting for approval, done / stopped / failed) and its streamed text in whole
 * sentences and paragraphs, each said once. A delta that ends mid-sentence says nothing yet; a
 * code block is named, not read out. Pure: tested in Node.
 */
import type { RunStatus } from '../../../src/protocol/events';

/** How many announcements the live region keeps in the DOM (older ones are dropped; they were spoken). */
export const MAX_KEPT_ANNOUNCEMENTS = 6;

/** The newest run of the open thread, as the announcer needs it. */
export interface RunSnapshot {
  runId: string;
  status: RunStatus;
  /** The text streamed so far (the run's text segments, in order). */
  streamed: string;
  /** The message that closed the run, when it has one. */
  finalText: string | null;
  error: string | null;
  /** The tool a call of this run waits on the user's approval for, if any. */
  awaitingApproval: string | null;
}

interface Spoken {
  /** Characters of `streamed` already announced. */
  offset: number;
  status: RunStatus;
  approval: string | null;
}

/** A sentence end followed by whitespace, or a paragraph break. */
const BOUNDARY = /[.!?…](?=\s)|\n\s*\n/g;
/** A code fence's line (its opening or its closing). */
const FENCE = /^[ \t]*```[^\n]*(\n|$)/gm;

/** The end of the last complete sentence, paragraph or code block in `text`, never inside an open code fence (0: none). */
export function speakableEnd(text: string): number {
  const fences = [...text.matchAll(FENCE)].map((m) => ({ start: m.index, end: m.index + m[0].length, complete: m[0].endsWith('\n') }));
  const inFence = (at: number): boolean => fences.filter((f) => f.start < at).length % 2 === 1;
  let end = 0;
  for (const m of text.matchAll(BOUNDARY)) {
    const at = m.index + m[0].length;
    if (!inFence(at)) end = Math.max(end, at);
  }
  // The end of a closing fence's line is a boundary of its own.
  for (let i = 1; i < fences.length; i += 2) if (fences[i]!.complete) end = Math.max(end, fences[i]!.end);
  return end;
}

/** Markdown as it should be heard: code blocks named, markup dropped, whitespace collapsed. */
export function speakable(markdown: string): string {
  return markdown
    .replace(/```\s*([\w+-]*)[^\n]*\n[\s\S]*?(```|$)/g, (_m, lang: string) => ` Code block${lang ? ` (${lang})` : ''}. `)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|[-*+]|\d+[.)]|>)\s+/gm, '')
    .replace(/(\*\*|__|~~|`)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function endedText(s: RunSnapshot): string {
  if (s.status === 'completed') return 'Vox is done.';
  if (s.status === 'cancelled') return 'Vox stopped.';
  return s.error ? `Vox failed: ${s.error}` : 'Vox failed.';
}

/** Turns run snapshots into announcements, each said once. One per open thread. */
export class Announcer {
  private readonly runs = new Map<string, Spoken>();

  /** The announcements `s` adds to what was said (often none). */
  step(s: RunSnapshot): string[] {
    const out: string[] = [];
    const say = (text: string): void => {
      if (text.length > 0) out.push(text);
    };
    let seen = this.runs.get(s.runId);
    if (!seen) {
      // The run the thread opened on, over or already streaming, is not read out from its start;
      // one that starts while the thread is open is, from its first word.
      const opened = this.runs.size === 0;
      seen = { offset: opened ? s.streamed.length : 0, status: opened ? s.status : 'running', approval: null };
      this.runs.set(s.runId, seen);
      if (seen.status !== 'running') return out;
      if (!opened || s.streamed.length === 0) say('Vox is thinking…');
    }
    if (seen.status !== 'running') return out;
    const pending = s.streamed.slice(seen.offset);
    const stops = s.status !== 'running' || (s.awaitingApproval !== null && s.awaitingApproval !== seen.approval);
    // Text the model has stopped writing (a tool call waits, the run ended) is said whole; else up to its last sentence.
    const end = stops ? pending.length : speakableEnd(pending);
    if (end > 0) {
      say(speakable(pending.slice(0, end)));
      seen.offset += end;
    }
    if (s.awaitingApproval !== seen.approval) {
      seen.approval = s.awaitingApproval;
      if (s.awaitingApproval !== null) say(`Vox is waiting for your approval: ${s.awaitingApproval}.`);
    }
    if (s.status !== 'running') {
      // Nothing streamed (the engine could not stream this turn): the answer itself.
      if (seen.offset === 0 && s.finalText) say(speakable(s.finalText));
      seen.status = s.status;
      say(endedText(s));
    }
    return out;
  }
}
