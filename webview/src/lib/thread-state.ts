/**
 * Thread view state: a pure, JSON-serialisable reducer that builds the view of one thread from
 * the engine's stored events and the live turn chunks of its runs (./turn-chunks.ts). No DOM, no
 * Svelte: the app wraps the state in a `$state` proxy and calls these functions, which mutate it
 * in place; tests call them on plain objects. The state's shape is ./thread-model.ts; what each
 * event does is its feature's reducer (./features/: one owner per event type), looked up in a
 * FeatureRegistry.
 *
 * Exactly-once: the state remembers the last event seq of the thread and, per run (turn), the
 * last chunk seq. Anything at or below those is a duplicate (a replay after a re-subscribe, or a
 * message still in flight from the old subscription) and is skipped, so a client may re-subscribe
 * with `subscribeThread{afterSeq: lastEventSeq}` / `subscribeTurn{afterSeq: lastChunkSeq}` at any
 * time without losing or doubling text. Batched chunks carry the seq of their last merged chunk.
 *
 * Every event is decoded through `eventEnvelope`: unknown variants are skipped (forward
 * compatibility), broken ones are reported through `warn` and skipped; nothing here throws on
 * wire data.
 */
import { eventEnvelope, type StoredEvent } from '../../../src/protocol/events';
import type { ChunkKind, ToolCallData, WireChunk } from '../../../src/protocol/chunks';
import { DEFAULT_REGISTRY } from './features/index';
import type { FeatureRegistry } from './features/registry';
import { finishBatch, isTree } from './tree-state';
import { runsNeedingStream, type EventsResult, type ThreadState } from './thread-model';
import type { Warn } from './turn-chunks';

export { activeRun, createThreadState, runsNeedingStream, runsToStream, type Entry, type EventsResult, type QueuedView, type ThreadState } from './thread-model';

/** A decoded stored event, as `eventEnvelope` produces it. */
export type WireEvent = StoredEvent;
export type ChunkKindName = ChunkKind;
/** `kind` is open: chunks of kinds this build does not know are skipped (a newer engine may add some). */
export type { WireChunk, ToolCallData };
export { applyChunks, applyTurnEnded, markStreamUnavailable, type TurnEndStatus, type Warn } from './turn-chunks';

export type { BackgroundView, FinalMessage, ItemView, RunView, StreamSegment, ToolResultView, WaitingView } from './run-views';

const noWarn: Warn = () => {};

function seqOf(raw: unknown): number | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const seq = (raw as { seq?: unknown }).seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : null;
}

/**
 * Applies the raw events of one `events` update (each decoded through `eventEnvelope`), each
 * through the reducer of the feature that owns its type in `registry` (the chat's features by default).
 */
export function applyEvents(state: ThreadState, rawEvents: readonly unknown[], warn: Warn = noWarn, registry: FeatureRegistry = DEFAULT_REGISTRY): EventsResult {
  const result: EventsResult = { applied: 0, startedRuns: [], endedRuns: [], completedItems: [], userMessages: [] };
  for (const raw of rawEvents) {
    const seq = seqOf(raw);
    if (seq !== null && seq <= state.lastEventSeq) continue; // already seen: replay overlap
    const decoded = eventEnvelope.tryDecode(raw);
    if (!decoded.ok) {
      warn(`ignoring a broken event: ${decoded.error.message}`);
    } else if (decoded.message.kind === 'unknown') {
      // A newer engine's event: skip it, but count it as seen.
    } else {
      const ev = decoded.message.value;
      if (ev.threadId === state.threadId) {
        registry.apply(state, ev, result);
        result.applied++;
      }
    }
    if (seq !== null && seq > state.lastEventSeq) state.lastEventSeq = seq;
  }
  finishBatch(state); // the open branch, recomputed once per batch if the head moved off it
  return result;
}

/** The subscriptions that resume this thread exactly where the state stands. */
export function resumePlan(state: ThreadState): { threadAfterSeq: number; turns: { turnId: string; afterSeq: number }[] } {
  return {
    threadAfterSeq: state.lastEventSeq,
    turns: runsNeedingStream(state).map((r) => ({ turnId: r.runId, afterSeq: r.lastChunkSeq })),
  };
}

/** A cheap structural check of a state restored from `vscode.getState` (our own data, maybe an older build's). */
export function isThreadState(v: unknown): v is ThreadState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<ThreadState>;
  if (typeof s.threadId !== 'string' || typeof s.lastEventSeq !== 'number' || !Array.isArray(s.entries)) return false;
  if (typeof s.runs !== 'object' || s.runs === null || !isTree(s.tree)) return false;
  return Object.values(s.runs).every((r) => typeof r === 'object' && r !== null && Array.isArray(r.items) && Array.isArray(r.stream) && typeof r.lastChunkSeq === 'number');
}
