/**
 * The compaction module (SPEC 3.7): `compactThread` and `listCompactions`, the `thread.compacted`
 * projection, and automatic compaction before a model call that would not fit the window.
 */
import { activeCompactions } from '../../protocol/compaction';
import type { Host } from '../host';
import type { EngineModule, ModuleHandlers } from '../module';
import type { ProviderRegistry } from '../providers/registry';
import type { VoxStore } from '../store/store';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import { COMPACTION_SCHEMA } from './projections';
import { compactThread, type CompactionDeps } from './service';
import { installCompactionStages } from './stages';

interface Services { store: VoxStore; providers: ProviderRegistry; host: Host }

const deps = ({ store, providers, host }: Services): CompactionDeps => ({ store, resolveModel: (ref) => providers.resolve(ref), defaultModel: () => host.model() });

const handlers: ModuleHandlers<'compactThread' | 'listCompactions', Services> = {
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

export const compactionModule: EngineModule = {
  name: 'compaction',
  deps: ['conversation'],
  schema: COMPACTION_SCHEMA,
  handlers,
  install({ hooks, store, host, services }) {
    const { providers, streams } = services as { providers: ProviderRegistry; streams: TurnStreamRegistry };
    installCompactionStages(hooks, {
      store, streams, resolveModel: (ref) => providers.resolve(ref), defaultModel: () => host.model(),
      onError: (e, threadId) => host.notify({ level: 'warning', source: 'compaction', message: `Automatic compaction of thread ${threadId} failed: ${(e as Error).message ?? String(e)}` }),
    });
  },
};
