/**
 * False refusals (SPEC 3.2): a reply the engine discarded as a false refusal and asked again
 * (run.refusalRetried) becomes a note item of its run. The live side — the `refusalRetry` and
 * `textRevised` chunks — is ../salvage-state.ts, which ../turn-chunks.ts calls.
 */
import { insertItem } from '../run-views';
import { defineFeature } from './feature';

export const salvageFeature = defineFeature({
  name: 'salvage',
  events: {
    'run.refusalRetried'(state, ev) {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: 'refusalRetry', tools: ev.tools, toolName: null, arguments: null,
        status: 'completed', content: ev.discarded, isError: false,
      });
    },
  },
});
