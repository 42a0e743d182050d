/**
 * ThreadBuilder: turns what a parser recognises (a prompt, assistant text, reasoning, a tool call
 * and its result, usage, a compact summary) into Vox events with derived ids and the source's
 * timestamps. One Vox run per prompt: `message.added` (user) + `run.started`, then one item per
 * text/reasoning block and tool call, and at the turn's end the assistant message (its text
 * blocks joined) + `run.ended` with the summed usage. Its state is plain JSON, kept per file in
 * the import bookkeeping, so a grown file continues where the last import stopped; ordinals and
 * parents are fixed once more when the events are applied (./apply.ts), where the store decides.
 */
import type { UsageTotals } from '../../protocol/events';
import { redact } from '../platform/secrets';
import {
  importedItemId, importedMessageId, importedRunId, titleFrom,
  type ImportSource, type ImportTally, type TimedEvent,
} from './types';

/** Open tool calls remembered across imports of a grown file (older ones are dropped, their results then count as orphans). */
const MAX_OPEN_CALLS = 500;
/** Usage keys (API message ids) remembered per run to count each model call once. */
const MAX_USAGE_KEYS = 200;

export interface ThreadMeta {
  title: string | null;
  parentThreadId?: string | null;
  cwd?: string | null;
  gitBranch?: string | null;
  version?: string | null;
  sourceId: string;
}

interface RunState {
  id: string;
  ordinal: number;
  userMessageId: string;
  nextItem: number;
  model: string;
  usage: UsageTotals;
  usageKeys: string[];
  ended: boolean;
  /** Text blocks since the last assistant message, and the key of the first (the message id derives from it). */
  text: string[];
  textKey: string | null;
  lastTime: number;
}

export interface BuilderState {
  threadId: string;
  created: boolean;
  title: string | null;
  lastMessageId: string | null;
  nextRunOrdinal: number;
  run: RunState | null;
  /** Source call id → run id of tool calls still waiting for their result. */
  openCalls: Record<string, string>;
  model: string;
}

export function newBuilderState(threadId: string): BuilderState {
  return { threadId, created: false, title: null, lastMessageId: null, nextRunOrdinal: 0, run: null, openCalls: {}, model: 'unknown' };
}

const zeroUsage = (): UsageTotals => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });

export class ThreadBuilder {
  readonly events: TimedEvent[] = [];

  constructor(
    readonly source: ImportSource,
    readonly state: BuilderState,
    readonly tally: ImportTally,
    private meta: ThreadMeta,
  ) {}

  get threadId(): string {
    return this.state.threadId;
  }

  /** Updates what the thread is created with (before it is), e.g. the cwd found on a later line. */
  setMeta(patch: Partial<ThreadMeta>): void {
    this.meta = { ...this.meta, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined && v !== null)) };
  }

  setModel(model: string | null | undefined): void {
    if (!model || model === '<synthetic>') return;
    this.state.model = model;
    const run = this.state.run;
    if (run && !run.ended && run.model === 'unknown') {
      run.model = model;
      // The prompt came before the answer that names the model: its run.started (not applied yet) takes it.
      const start = this.events.find((e) => e.event.type === 'run.started' && e.event.runId === run.id);
      if (start && start.event.type === 'run.started') start.event = { ...start.event, model };
    }
  }

  private ensureThread(time: number, titleHint: string | null): void {
    if (this.state.created) return;
    const title = redact(this.meta.title ?? (titleHint ? titleFrom(titleHint) : null) ?? `${this.source} session`);
    this.state.created = true;
    this.state.title = title;
    this.events.push({
      time,
      event: {
        type: 'thread.created', threadId: this.threadId, title,
        parentThreadId: this.meta.parentThreadId ?? null, parentRunId: null,
        source: this.source, sourceId: this.meta.sourceId,
        sourceMeta: JSON.stringify({ cwd: this.meta.cwd ?? null, gitBranch: this.meta.gitBranch ?? null, version: this.meta.version ?? null }),
      },
    });
  }

  /** A title the source gives later (a summary line, a custom title): a rename when it differs. */
  rename(title: string, time: number): void {
    const t = titleFrom(redact(title));
    if (!t) return;
    if (!this.state.created) {
      this.meta.title = t;
      return;
    }
    if (t === this.state.title) return;
    this.state.title = t;
    this.events.push({ time, event: { type: 'thread.renamed', threadId: this.threadId, title: t } });
  }

  private addMessage(key: string, role: 'user' | 'assistant' | 'system', content: string, runId: string | null, time: number): string {
    const messageId = importedMessageId(this.threadId, key);
    this.events.push({ time, event: { type: 'message.added', threadId: this.threadId, messageId, parentId: this.state.lastMessageId, role, content: redact(content), runId, status: 'complete' } });
    this.state.lastMessageId = messageId;
    return messageId;
  }

  /** A user prompt: ends the open turn and starts a new one. */
  prompt(key: string, text: string, time: number): void {
    this.endTurn(time);
    this.ensureThread(time, text);
    const userMessageId = this.addMessage(key, 'user', text, null, time);
    const id = importedRunId(this.threadId, key);
    const ordinal = this.state.nextRunOrdinal++;
    this.state.run = { id, ordinal, userMessageId, nextItem: 0, model: this.state.model, usage: zeroUsage(), usageKeys: [], ended: false, text: [], textKey: null, lastTime: time };
    this.events.push({ time, event: { type: 'run.started', threadId: this.threadId, runId: id, ordinal, provider: this.source, model: this.state.model, ownerPid: 0, ownerStartedAt: null, userMessageId } });
  }

  /** A note outside the turns (a compact summary): ends the open turn, kept as a system message. */
  note(key: string, text: string, time: number): void {
    this.endTurn(time);
    this.ensureThread(time, null);
    this.addMessage(key, 'system', text, null, time);
  }

  /** The run content goes to: the open one, or the last one of the thread when a grown file continues it. */
  private currentRun(what: string): RunState | null {
    if (this.state.run) return this.state.run;
    this.tally.skipped[`${what}WithoutPrompt`] = (this.tally.skipped[`${what}WithoutPrompt`] ?? 0) + 1;
    return null;
  }

  private item(run: RunState, key: string, kind: 'text' | 'reasoning' | 'toolCall', toolName: string | null, args: string | null, time: number): string {
    const itemId = importedItemId(run.id, key);
    const ordinal = run.nextItem++;
    run.lastTime = time;
    this.events.push({ time, event: { type: 'item.started', threadId: this.threadId, runId: run.id, itemId, ordinal, kind, toolName, arguments: args === null ? null : redact(args) } });
    return itemId;
  }

  private complete(run: RunState, itemId: string, content: string, isError: boolean, time: number): void {
    this.events.push({ time, event: { type: 'item.completed', threadId: this.threadId, runId: run.id, itemId, status: isError ? 'failed' : 'completed', content: redact(content), isError } });
  }

  text(key: string, text: string, time: number): void {
    const run = this.currentRun('text');
    if (!run || text.length === 0) return;
    const id = this.item(run, key, 'text', null, null, time);
    this.complete(run, id, text, false, time);
    if (run.textKey === null) run.textKey = key;
    run.text.push(text);
  }

  reasoning(key: string, text: string, time: number): void {
    const run = this.currentRun('reasoning');
    if (!run || text.length === 0) return;
    const id = this.item(run, key, 'reasoning', null, null, time);
    this.complete(run, id, text, false, time);
  }

  toolCall(callId: string, name: string, args: string, time: number): void {
    const run = this.currentRun('toolCall');
    if (!run) return;
    this.item(run, callId, 'toolCall', name, args, time);
    this.state.openCalls[callId] = run.id;
    const keys = Object.keys(this.state.openCalls);
    if (keys.length > MAX_OPEN_CALLS) delete this.state.openCalls[keys[0]!];
  }

  /** A tool result; false when its call is unknown (the caller counts it as skipped). */
  toolResult(callId: string, output: string, isError: boolean, time: number): boolean {
    const runId = this.state.openCalls[callId];
    if (runId === undefined) return false;
    delete this.state.openCalls[callId];
    this.events.push({ time, event: { type: 'item.completed', threadId: this.threadId, runId, itemId: importedItemId(runId, callId), status: isError ? 'failed' : 'completed', content: redact(output), isError } });
    return true;
  }

  /** Usage of one model call (`key` dedupes calls the source writes on several lines). */
  usage(key: string | null, u: Partial<UsageTotals>): void {
    const run = this.state.run;
    if (!run || run.ended) return;
    if (key !== null) {
      if (run.usageKeys.includes(key)) return;
      run.usageKeys.push(key);
      if (run.usageKeys.length > MAX_USAGE_KEYS) run.usageKeys.shift();
    }
    run.usage.inputTokens += u.inputTokens ?? 0;
    run.usage.outputTokens += u.outputTokens ?? 0;
    run.usage.cacheReadTokens = (run.usage.cacheReadTokens ?? 0) + (u.cacheReadTokens ?? 0);
    run.usage.cacheWriteTokens = (run.usage.cacheWriteTokens ?? 0) + (u.cacheWriteTokens ?? 0);
    run.usage.reasoningTokens = (run.usage.reasoningTokens ?? 0) + (u.reasoningTokens ?? 0);
  }

  /** Ends the open turn: its text becomes the assistant message, then `run.ended` (once per run). */
  endTurn(time?: number): void {
    const run = this.state.run;
    if (!run) return;
    const at = time ?? run.lastTime;
    if (run.text.length > 0 && run.textKey !== null) {
      this.addMessage(`${run.textKey}:answer`, 'assistant', run.text.join('\n\n'), run.id, Math.max(run.lastTime, 0));
      run.text = [];
      run.textKey = null;
    }
    if (!run.ended) {
      run.ended = true;
      this.events.push({ time: Math.max(at, run.lastTime), event: { type: 'run.ended', threadId: this.threadId, runId: run.id, status: 'completed', error: null, usage: run.usage } });
    }
  }

  /**
   * The end of what was read: the open turn ends (a finished session is the usual case); the run
   * stays the current one, so a grown file's further answers of the same turn join it.
   */
  finish(time: number): TimedEvent[] {
    this.endTurn(time);
    return this.events;
  }
}
