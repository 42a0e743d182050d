/** Handlers of the compaction commands (../../../protocol/commands/compaction.ts); the work is in ../../compaction/. */
import { activeCompactions } from '../../../protocol/compaction';
import { compactThread, type CompactionDeps } from '../../compaction/service';
import type { EngineServices } from '../../services';
import type { HandlerTable } from './types';

const deps = ({ store, providers, host }: EngineServices): CompactionDeps => ({ store, resolveModel: (ref) => providers.resolve(ref), defaultModel: () => host.model() });

export const compactionHandlers: HandlerTable<'compactThread' | 'listCompactions'> = {
  async compactThread({ services }, cmd) {
    const d = deps(services);
    const model = cmd.model !== undefined ? await d.resolveModel(cmd.model) : undefined;
    return compactThread(d, { threadId: cmd.threadId, mode: cmd.mode, ...(cmd.messageId !== undefined ? { messageId: cmd.messageId } : {}), ...(model ? { model } : {}) });
  },
  listCompactions({ services: { store } }, cmd) {
    store.getThread(cmd.threadId);
    const all = store.compactions(cmd.threadId);
    const active = new Set(activeCompactions(store.activePath(cmd.threadId), all).map((c) => c.compaction.compactionId));
    return {
      compactions: all.map((c) => ({
        compactionId: c.compactionId, mode: c.mode, trigger: c.trigger, fromMessageId: c.fromMessageId, upToMessageId: c.upToMessageId,
        compactMessageIndex: c.compactMessageIndex, coveredMessages: c.coveredMessages, summary: c.summary, model: c.model,
        usage: { inputTokens: c.inputTokens, outputTokens: c.outputTokens },
        supersedes: all.filter((o) => o.supersededBy === c.compactionId).map((o) => o.compactionId), runId: c.runId,
        active: active.has(c.compactionId), createdAt: c.createdAt,
      })),
    };
  },
};
