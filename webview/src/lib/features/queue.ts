/**
 * The queue (SPEC 2.4): prompts waiting for the running turn, folded from `queue.*` events in
 * order, and `run.steered` — a queued prompt the running turn took at a step boundary, shown as a
 * steer item of that run. Intents: edit, move, cancel a queued prompt, or promote it to a steer.
 */
import { MAX_PROMPT_CHARS } from '../../../../src/protocol/commands/index';
import { insertItem } from '../run-views';
import type { QueuedView, ThreadState } from '../thread-model';
import { defineFeature } from './feature';

/** The waiting list (a state saved by an older build has none); events about unknown entries are ignored. */
function queueOf(state: ThreadState): QueuedView[] {
  state.queue ??= [];
  return state.queue;
}

function indexOf(queue: readonly QueuedView[], entryId: string): number {
  return queue.findIndex((q) => q.entryId === entryId);
}

export const queueFeature = defineFeature({
  name: 'queue',
  events: {
    'queue.added'(state, ev) {
      const queue = queueOf(state);
      if (indexOf(queue, ev.entryId) < 0) queue.push({ entryId: ev.entryId, prompt: ev.prompt, model: ev.model, steer: false, ownerPid: ev.ownerPid });
    },
    'queue.edited'(state, ev) {
      const queue = queueOf(state);
      const at = indexOf(queue, ev.entryId);
      if (at >= 0) queue[at]!.prompt = ev.prompt;
    },
    'queue.steerRequested'(state, ev) {
      const queue = queueOf(state);
      const at = indexOf(queue, ev.entryId);
      if (at >= 0) queue[at]!.steer = true;
    },
    'queue.moved'(state, ev) {
      const queue = queueOf(state);
      const at = indexOf(queue, ev.entryId);
      if (at < 0) return;
      const [entry] = queue.splice(at, 1);
      queue.splice(Math.max(0, Math.min(ev.toIndex, queue.length)), 0, entry!);
    },
    'queue.removed'(state, ev) {
      const queue = queueOf(state);
      const at = indexOf(queue, ev.entryId);
      if (at >= 0) queue.splice(at, 1);
    },
    'run.steered'(state, ev) {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: 'steer', skippedTools: ev.skippedTools, toolName: null, arguments: null,
        status: 'completed', content: ev.prompt, isError: false,
      });
    },
  },
  install(ctx) {
    const m = ctx.model;
    return {
      intents: {
        /** Replaces a queued prompt's text (false for an empty or too long one). */
        editQueued(entryId: string, prompt: string): boolean {
          const thread = m.thread;
          if (!thread || prompt.trim().length === 0 || prompt.length > MAX_PROMPT_CHARS) return false;
          ctx.send({ type: 'editQueued', threadId: thread.threadId, entryId, prompt });
          return true;
        },
        /** Moves a queued prompt to `toIndex` (0 = next); the strip reorders when the event comes back. */
        moveQueued(entryId: string, toIndex: number): void {
          const thread = m.thread;
          if (!thread || toIndex < 0 || toIndex >= thread.queue.length) return;
          ctx.send({ type: 'moveQueued', threadId: thread.threadId, entryId, toIndex });
        },
        cancelQueued(entryId: string): void {
          const thread = m.thread;
          if (thread) ctx.send({ type: 'cancelQueued', threadId: thread.threadId, entryId });
        },
        /** promoteToSteer: the running turn takes the queued prompt at its next step. */
        steerQueued(entryId: string): void {
          const thread = m.thread;
          if (thread) ctx.send({ type: 'steerQueued', threadId: thread.threadId, entryId });
        },
      },
    };
  },
});
