/**
 * The composer's context: the @-mentions popup, the chips and the context meter under `context`
 * (../context-state.ts). Their answers come here
 * (`suggestMentions`, `estimateContext`; a failed estimate hides the meter without a notice), and
 * the meter is estimated again when another thread opens and when a run ends (the history grew).
 */
import { ContextController } from '../context-state';
import { defineFeature } from './feature';

export const contextFeature = defineFeature({
  name: 'context',
  install(ctx) {
    const m = ctx.model;
    /** @-mentions, chips and the context meter of the composer (../context-state.ts). */
    const context = new ContextController(m.context, {
      send: (c) => ctx.send(c),
      threadId: () => m.thread?.threadId ?? null,
      draft: () => m.draft,
      setDraft: (t) => (m.draft = t),
      schedule: (fn, ms) => {
        const h = setTimeout(fn, ms);
        return { cancel: () => clearTimeout(h) };
      },
    });
    return {
      intents: { context },
      results: {
        suggestMentions: (value, _req, inReplyTo) => void context.onResult(inReplyTo, 'suggestMentions', value),
        estimateContext: (value, _req, inReplyTo) => void context.onResult(inReplyTo, 'estimateContext', value),
      },
      errors: {
        // The meter hides; no notice for a background estimate.
        suggestMentions: (u) => context.onError(u.inReplyTo, 'suggestMentions'),
        estimateContext: (u) => context.onError(u.inReplyTo, 'estimateContext'),
      },
      threadChanged: () => context.refresh(),
      runsEnded: () => context.refresh(), // the history grew: the meter counts it
    };
  },
});
