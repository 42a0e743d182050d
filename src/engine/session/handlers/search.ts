/** The handler of `searchThreads` (../../../protocol/commands/search.ts): the store's database searched by ../../search/search.ts. */
import { searchThreads } from '../../search/search';
import type { HandlerTable } from './types';

export const searchHandlers: HandlerTable<'searchThreads'> = {
  searchThreads({ services: { store } }, cmd) {
    return searchThreads(store.db, cmd.query, { now: Date.now(), ...(cmd.limit === undefined ? {} : { limit: cmd.limit }) });
  },
};
