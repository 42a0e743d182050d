/**
 * Turn costs: what each run of the open thread cost and the thread's total, from the engine's
 * ledger (`getThreadCosts`), kept in `model.costs` (../turn-cost-state.ts). Asked for when a
 * thread opens (or the saved one is restored), when a new engine session comes and when runs end
 * — folded into one request in flight, so a long replay asks once. A failed read (an engine
 * without a ledger, a thread not stored yet) shows no cost and no notice.
 */
import { ThreadCostRequests } from '../turn-cost-state';
import { defineFeature } from './feature';

export const costsFeature = defineFeature({
  name: 'costs',
  install(ctx) {
    const costs = new ThreadCostRequests({
      model: ctx.model,
      send: (threadId) => ctx.send({ type: 'getThreadCosts', threadId }, { threadId }),
      schedule: (fn) => queueMicrotask(fn),
    });
    return {
      results: { getThreadCosts: (value) => costs.onResult(value) },
      errors: {
        getThreadCosts(u) {
          ctx.log.warn(`no turn costs (${u.code}: ${u.message})`);
          return true;
        },
      },
      replied: (inReplyTo) => costs.settled(inReplyTo),
      start: () => costs.refresh(),
      reconnected: () => costs.reconnected(),
      threadChanged: () => costs.threadChanged(),
      runsEnded: () => costs.refresh(),
    };
  },
});
