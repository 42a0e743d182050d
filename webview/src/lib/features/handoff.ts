/**
 * Context handoff across models (SPEC 5.1): the handoff a run's request carried (handoff.built)
 * on the run, for the note above its answer (../handoff-note.ts words it).
 */
import { handoffView } from '../handoff-note';
import { defineFeature } from './feature';

export const handoffFeature = defineFeature({
  name: 'handoff',
  events: {
    'handoff.built'(state, ev) {
      const run = state.runs[ev.runId];
      if (run) run.handoff = handoffView(ev);
    },
  },
});
