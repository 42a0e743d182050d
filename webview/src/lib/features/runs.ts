/**
 * Runs and their live stream: a run's lifecycle from its events (run.started, item.started,
 * item.completed, run.ended), the turn chunks and turn ends of the runs the open thread streams
 * (../thread-state.ts folds the chunks), the subscriptions of the open thread — asked for at start
 * and again for every new engine session — and Stop.
 */
import type { StoredEventOf } from '../../../../src/protocol/events';
import { insertItem, type RunView } from '../run-views';
import { activeRun } from '../thread-model';
import { addRun } from '../tree-state';
import { applyChunks, applyTurnEnded, markStreamUnavailable } from '../turn-chunks';
import { defineFeature } from './feature';

function newRun(ev: StoredEventOf<'run.started'>): RunView {
  return {
    runId: ev.runId, ordinal: ev.ordinal, provider: ev.provider, model: ev.model, userMessageId: ev.userMessageId,
    status: 'running', error: null, usage: null, items: [], stream: [], lastChunkSeq: 0,
    streamEnded: false, streamUnavailable: false, statusText: null, final: null, waiting: null, background: [], settling: false,
    ...(ev.posture ? { posture: ev.posture } : {}),
  };
}

export const runsFeature = defineFeature({
  name: 'runs',
  events: {
    'run.started'(state, ev, result) {
      if (state.runs[ev.runId]) return;
      state.runs[ev.runId] = newRun(ev);
      addRun(state, ev.runId, ev.userMessageId);
      result.startedRuns.push(ev.runId);
    },
    'item.started'(state, ev) {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: ev.kind, toolName: ev.toolName, arguments: ev.arguments,
        status: 'started', content: null, isError: false, ...(ev.permission ? { permission: ev.permission } : {}),
      });
    },
    'item.completed'(state, ev, result) {
      const item = state.runs[ev.runId]?.items.find((i) => i.itemId === ev.itemId);
      if (!item) return;
      item.status = ev.status;
      item.content = ev.content;
      item.isError = ev.isError;
      if (ev.app) item.app = ev.app;
      result.completedItems.push(ev.itemId);
    },
    'run.ended'(state, ev, result) {
      const run = state.runs[ev.runId];
      if (!run) return;
      run.waiting = null;
      run.settling = false;
      run.status = ev.status;
      run.error = ev.error;
      run.usage = { inputTokens: ev.usage.inputTokens, outputTokens: ev.usage.outputTokens, ...(ev.usage.estimated ? { estimated: true } : {}) };
      if (ev.stopReason) run.stopReason = ev.stopReason;
      if (ev.cause) run.cause = ev.cause;
      result.endedRuns.push(ev.runId);
    },
  },
  install(ctx) {
    const { model: m, log } = ctx;
    return {
      intents: {
        /** Stops the open thread's active run. */
        cancelRun(): boolean {
          const run = m.thread ? activeRun(m.thread) : null;
          if (!run) return false;
          ctx.send({ type: 'cancelRun', runId: run.runId });
          return true;
        },
      },
      updates: {
        turnChunks(u) {
          if (m.thread && !applyChunks(m.thread, u.turnId, u.chunks, (w) => log.warn(w))) {
            log.warn(`ignoring chunks of turn ${u.turnId}, which is not in the open thread`);
            return;
          }
          // Chunks of a run that already ended (its run.ended save came first, or it streamed late): the next save carries them.
          if (m.thread && m.thread.runs[u.turnId]?.status !== 'running') ctx.deferSave();
        },
        turnEnded(u) {
          ctx.forgetTurn(u.turnId);
          // Saved once per turn, by the run.ended event (flushed on hide or dispose if it never comes).
          if (m.thread && m.thread.runs[u.turnId]?.status === 'running' && applyTurnEnded(m.thread, u.turnId, u.status, u.error)) ctx.deferSave();
          else if (m.thread) applyTurnEnded(m.thread, u.turnId, u.status, u.error); // after run.ended: nothing a resume needs
        },
      },
      errors: {
        subscribeTurn(u, req) {
          if (!req.turnId) return false;
          // The turn left the engine's memory (or never streamed): its events still tell the story.
          ctx.forgetTurn(req.turnId);
          if (m.thread) markStreamUnavailable(m.thread, req.turnId);
          log.warn(`turn ${req.turnId} cannot stream (${u.code}: ${u.message}); showing its events`);
          return true;
        },
      },
      start: () => ctx.resubscribe(),
      reconnected: () => ctx.resubscribe(),
    };
  },
});
