/** The search module (SPEC 6.4): `searchThreads` over the store's FTS5 trigram index, and the index kept by the store's observers (./schema.ts). */
import type { EngineModule, ModuleHandlers } from '../module';
import type { VoxStore } from '../store/store';
import { SEARCH_SCHEMA } from './schema';
import { searchThreads } from './search';

const handlers: ModuleHandlers<'searchThreads', { store: VoxStore }> = {
  searchThreads({ services: { store } }, cmd) {
    return searchThreads(store.db, cmd.query, { now: Date.now(), ...(cmd.limit === undefined ? {} : { limit: cmd.limit }) });
  },
};

export const searchModule: EngineModule = { name: 'search', deps: [], schema: SEARCH_SCHEMA, handlers };
