/**
 * The open thread's queue as the webview shows it: the prompts waiting for the running turn
 * (SPEC 2.4), folded from `queue.*` events in order. Pure and JSON-serialisable, like the rest of
 * the thread state (./thread-state.ts), which calls `applyQueueEvent` for these events.
 */
import type { StoredEvent as WireEvent } from '../../../src/protocol/events';

export interface QueuedView {
  entryId: string;
  prompt: string;
  model: string | null;
  /** Promoted: the running turn takes it at its next boundary. */
  steer: boolean;
  /** Queued by another process (a `vox chat` in a terminal), which starts it when its turn comes. */
  ownerPid: number;
}

export type QueueEvent = Extract<WireEvent, { type: 'queue.added' | 'queue.edited' | 'queue.moved' | 'queue.steerRequested' | 'queue.removed' }>;

export function isQueueEvent(ev: WireEvent): ev is QueueEvent {
  return ev.type.startsWith('queue.');
}

/** Applies one queue event to the waiting list (in place); events about unknown entries are ignored. */
export function applyQueueEvent(queue: QueuedView[], ev: QueueEvent): void {
  const at = queue.findIndex((q) => q.entryId === ev.entryId);
  switch (ev.type) {
    case 'queue.added':
      if (at < 0) queue.push({ entryId: ev.entryId, prompt: ev.prompt, model: ev.model, steer: false, ownerPid: ev.ownerPid });
      return;
    case 'queue.edited':
      if (at >= 0) queue[at]!.prompt = ev.prompt;
      return;
    case 'queue.steerRequested':
      if (at >= 0) queue[at]!.steer = true;
      return;
    case 'queue.moved': {
      if (at < 0) return;
      const [entry] = queue.splice(at, 1);
      queue.splice(Math.max(0, Math.min(ev.toIndex, queue.length)), 0, entry!);
      return;
    }
    case 'queue.removed':
      if (at >= 0) queue.splice(at, 1);
      return;
  }
}
