/** The search module (SPEC 6.4): `searchThreads` over the store's FTS5 trigram index, and the index kept by the store's observers (./schema.ts). */
import type { EngineModule, ModuleHandlers } from '../module';
import type { VoxStore } from '../store/store';
import { SEARCH_SCHEMA } from './schema';
import { searchThreads } from './search';

const handlers: ModuleHandlers<'searchThreads', { store: VoxStore }> = {
  searchThreads({ services: { store }, session }, cmd) {
    // A workspace-bound session searches its workspace's threads only (../session/thread-scope.ts).
    const scope = session.scope;
    return searchThreads(store.db, cmd.query, { now: Date.now(), ...(cmd.limit === undefined ? {} : { limit: cmd.limit }), ...(scope ? { keep: (id: string) => scope.inScope(id) } : {}) });
  },
};

export const searchModule: EngineModule = { name: 'search', deps: [], schema: SEARCH_SCHEMA, handlers };
