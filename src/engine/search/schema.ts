/**
 * The search module's part of the store (./index-sync.ts): migration 13 (the FTS5 trigram index,
 * backfilled) and the observers that keep the index in step with the messages — inside the
 * transaction that appends each event, so the index never disagrees with the tables.
 */
import type { StoreSchema } from '../store/schema';
import { SEARCH_MIGRATION_VERSION, createSearchIndex, currentHead, dropThread, indexMessage, indexToolOutput, moveActive, reindexMessage } from './index-sync';

export const SEARCH_SCHEMA: StoreSchema = {
  module: 'search',
  // The index keeps its own copy of the text it matches: redacted with the rest (../store/redaction-pass.ts).
  redactable: [{ table: 'search_fts', columns: ['text'] }],
  migrations: [{
    version: SEARCH_MIGRATION_VERSION,
    description: 'search: the FTS5 trigram index over message bodies and tool output, backfilled (../search/index-sync.ts)',
    up: createSearchIndex,
  }],
  observers: {
    'thread.deleted': { after: (db, e) => dropThread(db, e.threadId) },
    'message.added': { before: (db, e) => currentHead(db, e.threadId), after: (db, e, _t, head: string | null) => indexMessage(db, e, head) },
    'thread.rewound': { before: (db, e) => currentHead(db, e.threadId), after: (db, e, _t, head: string | null) => moveActive(db, head, e.toMessageId) },
    'thread.branchSwitched': { before: (db, e) => currentHead(db, e.threadId), after: (db, e, _t, head: string | null) => moveActive(db, head, e.toMessageId) },
    'message.edited': { after: (db, e) => reindexMessage(db, e.messageId, e.content) },
    'item.completed': { after: (db, e) => indexToolOutput(db, e) },
  },
};
