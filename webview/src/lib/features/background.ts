/**
 * Background work of a run (SPEC 2.4): the subagents and background commands it started
 * (background.started / background.ended) and its settling — the model answered, the run waits
 * for its awaited work (run.settling) — as the run's card shows them. No intents: the work's
 * controls are the model's tools.
 */
import { defineFeature } from './feature';

export const backgroundFeature = defineFeature({
  name: 'background',
  events: {
    'background.started'(state, ev) {
      const run = state.runs[ev.runId];
      if (!run || run.background?.some((b) => b.handle === ev.handle)) return;
      run.background ??= []; // a state saved by an older build has none
      run.background.push({ handle: ev.handle, kind: ev.kind, title: ev.title, awaited: ev.awaited, childThreadId: ev.childThreadId, status: 'running' });
    },
    'background.ended'(state, ev) {
      const b = state.runs[ev.runId]?.background?.find((x) => x.handle === ev.handle);
      if (b) b.status = ev.status;
      if (state.runs[ev.runId]?.settling && !state.runs[ev.runId]!.background!.some((x) => x.awaited && x.status === 'running')) state.runs[ev.runId]!.settling = false;
    },
    'run.settling'(state, ev) {
      const run = state.runs[ev.runId];
      if (run) run.settling = true;
    },
  },
});
