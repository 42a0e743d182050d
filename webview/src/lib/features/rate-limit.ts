/**
 * Rate-limit waits (SPEC 2.4): a run waiting for a provider's limit (run.waitingRateLimit), its
 * auto-resume and snooze changed (run.rateLimitChanged) and its resumption (run.resumed), and
 * the wait's controls: Resume now, Snooze, auto-resume on or off.
 */
import { defineFeature } from './feature';

export const rateLimitFeature = defineFeature({
  name: 'rateLimit',
  events: {
    'run.waitingRateLimit'(state, ev) {
      const run = state.runs[ev.runId];
      if (run) run.waiting = { resetAtMs: ev.resetAtMs, autoResume: ev.autoResume, snoozedUntilMs: ev.snoozedUntilMs, attempt: ev.attempt, source: ev.source, message: ev.message };
    },
    'run.rateLimitChanged'(state, ev) {
      const w = state.runs[ev.runId]?.waiting;
      if (w) Object.assign(w, { autoResume: ev.autoResume, snoozedUntilMs: ev.snoozedUntilMs });
    },
    'run.resumed'(state, ev) {
      const run = state.runs[ev.runId];
      if (run) run.waiting = null;
    },
  },
  install(ctx) {
    return {
      intents: {
        resumeRun(runId: string): void {
          ctx.send({ type: 'resumeRun', runId });
        },
        snoozeRun(runId: string, forMs: number): void {
          ctx.send({ type: 'snoozeRun', runId, forMs });
        },
        setAutoResume(runId: string, autoResume: boolean): void {
          ctx.send({ type: 'setAutoResume', runId, autoResume });
        },
      },
    };
  },
});
