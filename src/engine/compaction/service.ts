/**
 * Compacting a thread (SPEC 3.7; the `compactThread` command and automatic compaction): the
 * range on the thread's active path (`full`, `upTo` a message, `from` a message to the end),
 * widened so it never cuts an earlier compaction (../../protocol/compaction.ts), summarised by
 * the thread's model (./summarize.ts), then recorded as one `thread.compacted` event — written
 * in an IMMEDIATE transaction that first checks again that no other run holds the thread and
 * that no other compaction landed meanwhile. The raw messages are never changed.
 */
import { activeCompactions, compactPath, widenRange, type CompactionMode } from '../../protocol/compaction';
import type { EventOf } from '../../protocol/events';
import { allocate } from '../ids/ids';
import { contextWindowOf } from '../providers/context-windows';
import type { ResolvedModel } from '../providers/types';
import { RunError } from '../runs/errors';
import { isLiveRun, storedPosture } from '../runs/registry';
import type { RunRow, VoxStore } from '../store/store';
import { CompactionError } from './errors';
import { summarize } from './summarize';

export interface CompactionDeps {
  store: VoxStore;
  resolveModel(ref: string): Promise<ResolvedModel>;
  /** The default model ref (a thread whose runs recorded none). */
  defaultModel(): string;
}

export interface CompactRequest {
  threadId: string;
  mode: CompactionMode;
  /** `upTo`: the last message compacted; `from`: the first. */
  messageId?: string;
  trigger?: 'manual' | 'auto';
  /** The run compacting automatically (it holds the thread; any other live run refuses). */
  runId?: string;
  /** The model to summarise with (default: the thread's current model). */
  model?: ResolvedModel;
  signal?: AbortSignal;
}

export type Compaction = Omit<EventOf<'thread.compacted'>, 'type' | 'threadId'>;

/** The ref of the model the thread's latest run used (its posture, else its row), or the default. */
export function threadModelRef(store: VoxStore, threadId: string, fallback: () => string): string {
  const last = store.runs(threadId).at(-1);
  if (!last) return fallback();
  return storedPosture(last)?.model ?? last.model; // both hold the ref as written (`openai:gpt-4o`)
}

function busyCheck(store: VoxStore, threadId: string, except: string | undefined): void {
  const live = store.running(threadId).find((r: RunRow) => r.id !== except && isLiveRun(r));
  if (live) throw new RunError('threadBusy', `this thread is running a turn (${live.model}); compact it when the turn has ended`, { runId: live.id, threadId });
}

/** The covered range as path indexes, from the mode and target. */
function rangeOf(path: readonly { id: string }[], req: CompactRequest): { from: number; to: number } {
  const { threadId, mode, messageId } = req;
  if (path.length === 0) throw new CompactionError('nothingToCompact', `thread ${threadId} has no messages to compact`, { threadId });
  if (mode === 'full') return { from: 0, to: path.length - 1 };
  if (messageId === undefined) throw new CompactionError('badTarget', `compacting "${mode}" needs a message id`, { threadId });
  const i = path.findIndex((m) => m.id === messageId);
  if (i < 0) throw new CompactionError('unknownMessage', `message ${messageId} is not on the thread's current path`, { threadId, messageId });
  return mode === 'upTo' ? { from: 0, to: i } : { from: i, to: path.length - 1 };
}

export async function compactThread(deps: CompactionDeps, req: CompactRequest): Promise<Compaction> {
  const { store } = deps;
  const { threadId } = req;
  store.getThread(threadId);
  busyCheck(store, threadId, req.runId);
  const path = store.activePath(threadId);
  const asked = rangeOf(path, req);
  const before = store.compactions(threadId);
  const { from, to, supersedes } = widenRange(path, before, asked.from, asked.to);
  const active = activeCompactions(path, before);
  if (active.some((c) => c.fromIndex === from && c.toIndex === to)) {
    throw new CompactionError('nothingToCompact', `messages ${from + 1}…${to + 1} are already compacted into one summary`, { threadId });
  }
  const model = req.model ?? (await deps.resolveModel(threadModelRef(store, threadId, deps.defaultModel)));
  const units = compactPath(path.slice(from, to + 1), before);
  const window = await contextWindowOf(model);
  const { summary, usage } = await summarize(model, units, window.tokens, req.signal);
  const compaction: Compaction = {
    compactionId: allocate('cmp'), mode: req.mode, trigger: req.trigger ?? 'manual',
    fromMessageId: path[from]!.id, upToMessageId: path[to]!.id, compactMessageIndex: to, coveredMessages: to - from + 1,
    summary, model: model.label, usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }, supersedes, runId: req.runId ?? null,
  };
  store.transact((append) => {
    busyCheck(store, threadId, req.runId);
    const now = store.compactions(threadId);
    if (now.length !== before.length) throw new CompactionError('conflict', `thread ${threadId} was compacted meanwhile; nothing was written`, { threadId });
    append({ type: 'thread.compacted', threadId, ...compaction });
  });
  return compaction;
}
