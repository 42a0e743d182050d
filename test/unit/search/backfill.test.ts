import { LEDGER_TABLES } from '../../../src/engine/ledger/schema';
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../../src/engine/store/store';
import { SEARCH_MIGRATION_VERSION } from '../../../src/engine/search/index-sync';
import { LATEST_SCHEMA_VERSION } from '../../../src/engine/modules';
import { searchThreads } from '../../../src/engine/search/search';
import { forEachDriver } from '../../support/drivers';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';

forEachDriver('search: migration 13 backfills an existing database', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('indexes the messages and tool output written before the index existed, active branches only, deleted threads not at all', () => {
    const file = path.join(dir, 'vox.db');
    const s = VoxStore.open(file);
    const msg = (threadId: string, messageId: string, parentId: string | null, content: string, runId: string | null = null) =>
      ({ type: 'message.added' as const, threadId, messageId, parentId, role: 'user' as const, content, runId, status: 'complete' as const });
    s.append(
      { type: 'thread.created', threadId: 'a', title: 'old thread' },
      msg('a', 'a1', null, 'we discussed the quarterly [roadmap](https://x.test/r) here'),
      { type: 'run.started', threadId: 'a', runId: 'ra', ordinal: 0, provider: 'p', model: 'm', ownerPid: process.pid, userMessageId: 'a1' },
      { type: 'item.started', threadId: 'a', runId: 'ra', itemId: 'ia', ordinal: 0, kind: 'toolCall', toolName: 'read', arguments: '{}' },
      { type: 'item.completed', threadId: 'a', runId: 'ra', itemId: 'ia', status: 'completed', content: 'contents of budget.xlsx', isError: false },
      msg('a', 'a2', 'a1', 'abandoned branch text'),
      msg('a', 'a3', 'a1', 'kept branch text'),
      { type: 'thread.created', threadId: 'gone', title: 'deleted' },
      msg('gone', 'g1', null, 'quarterly secret'),
      { type: 'thread.deleted', threadId: 'gone' },
    );
    // The database as a build before migration 13 left it: no index (nor the later mcp_apps of migration 14, threads.workspace of 15), user_version 12.
    s.db.exec('DROP TABLE search_fts; DROP TABLE search_docs; DROP TABLE mcp_apps; DROP INDEX threads_by_workspace; ALTER TABLE threads DROP COLUMN workspace;');
    for (const t of LEDGER_TABLES) s.db.exec(`DROP TABLE ${t}`); // migration 16's
    s.db.pragma(`user_version = ${SEARCH_MIGRATION_VERSION - 1}`);
    s.close();
    const again = VoxStore.open(file);
    assert.equal(again.db.pragma('user_version'), LATEST_SCHEMA_VERSION);
    const hits = (q: string) => searchThreads(again.db, q, { now: Date.now() }).messages.map((m) => [m.messageId, m.source]);
    assert.deepEqual(hits('quarterly'), [['a1', 'message']]);
    assert.deepEqual(hits('roadmap'), [['a1', 'message']]);
    assert.deepEqual(hits('x.test'), []);
    assert.deepEqual(hits('budget'), [['a1', 'tool']]); // no answer yet: the run's prompt
    assert.deepEqual(hits('branch text'), [['a3', 'message']]);
    again.close();
  });
});
