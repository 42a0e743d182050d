/**
 * The chat's handoff note (SPEC 5.1): what a run's `<context_handoff>` carried from the model
 * before it and what it left out, from the `handoff.built` event (live and after a reload:
 * the event is replayed with the thread). Pure: ../components/HandoffNote.svelte renders it.
 */
import type { HandoffSummary } from '../../../src/protocol/handoff';

export type { HandoffSummary };

/** The summary fields of a `handoff.built` event (without its thread and run ids). */
export function handoffView(ev: HandoffSummary & { threadId?: string; runId?: string; type?: string }): HandoffSummary {
  return {
    strategy: ev.strategy, sourceModel: ev.sourceModel, coveredFrom: ev.coveredFrom, coveredTo: ev.coveredTo,
    turnsVerbatim: ev.turnsVerbatim, turnsCompacted: ev.turnsCompacted, turnsOmitted: ev.turnsOmitted, checkpoints: ev.checkpoints,
    manualChars: ev.manualChars, manualCharsOmitted: ev.manualCharsOmitted, tokens: ev.tokens, bytes: ev.bytes,
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "Context handed off from <model>: N turns verbatim, M compacted, K left out" (manual text: its characters). */
export function handoffNoteText(h: HandoffSummary): string {
  const from = `Context handed off from ${h.sourceModel}`;
  if (h.strategy === 'manualContext') {
    return `${from}: your text (${plural(h.manualChars, 'character')})${h.manualCharsOmitted > 0 ? `, ${h.manualCharsOmitted} cut off` : ''}`;
  }
  const parts = [`${plural(h.turnsVerbatim, 'turn')} verbatim`, `${h.turnsCompacted} compacted`, `${h.turnsOmitted} left out`];
  if (h.checkpoints > 0) parts.push(plural(h.checkpoints, 'checkpoint'));
  return `${from}: ${parts.join(', ')}`;
}

/** The note's tooltip: the strategy, the runs covered, the size. */
export function handoffNoteDetail(h: HandoffSummary): string {
  return `Strategy ${h.strategy}; covered_runs ${h.coveredFrom}..${h.coveredTo}; ${h.tokens.toLocaleString('en-US')} tokens, ${h.bytes.toLocaleString('en-US')} bytes.`;
}
