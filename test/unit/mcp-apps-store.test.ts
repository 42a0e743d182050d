/**
 * MCP Apps in the store (migration 14, ../../src/engine/mcp-apps/schema.ts): a database a build
 * before it left (user_version 13) opens with the `mcp_apps` table added and its older events
 * intact; `item.completed {app}` records the app, `mcpApp.stateSaved` its state, and a state for
 * an item without an app is refused by the projection (the event is not written).
 */
import { LEDGER_TABLES } from '../../src/engine/ledger/schema';
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { MCP_APPS_MIGRATION_VERSION } from '../../src/engine/mcp-apps/schema';
import { mcpAppRow, mcpAppsOfThread } from '../../src/engine/mcp-apps/reads';
import { LATEST_SCHEMA_VERSION } from '../../src/engine/modules';
import { forEachDriver } from '../support/drivers';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

forEachDriver('MCP Apps: migration 14 and the projections', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('upgrades a version-13 database, then records apps and their states', () => {
    assert.equal(MCP_APPS_MIGRATION_VERSION, 14);
    assert.ok(LATEST_SCHEMA_VERSION >= MCP_APPS_MIGRATION_VERSION, 'a later migration keeps this one');
    const file = path.join(dir, 'vox.db');
    const s = VoxStore.open(file);
    s.append(
      { type: 'thread.created', threadId: 't', title: 'old' },
      { type: 'message.added', threadId: 't', messageId: 'u', parentId: null, role: 'user', content: 'hi', runId: null, status: 'complete' },
      { type: 'run.started', threadId: 't', runId: 'r', ordinal: 0, provider: 'p', model: 'm', ownerPid: process.pid, userMessageId: 'u' },
      { type: 'item.started', threadId: 't', runId: 'r', itemId: 'old', ordinal: 0, kind: 'toolCall', toolName: 'read', arguments: '{}' },
      { type: 'item.completed', threadId: 't', runId: 'r', itemId: 'old', status: 'completed', content: 'x', isError: false },
    );
    // Back to the shape of version 13: without this table and what later migrations added.
    s.db.exec('DROP TABLE mcp_apps; DROP INDEX threads_by_workspace; ALTER TABLE threads DROP COLUMN workspace;');
    for (const t of LEDGER_TABLES) s.db.exec(`DROP TABLE ${t}`); // migration 16's
    s.db.pragma('user_version = 13');
    s.close();

    const again = VoxStore.open(file);
    assert.equal(again.db.pragma('user_version'), LATEST_SCHEMA_VERSION);
    assert.deepEqual(mcpAppsOfThread(again.db, 't'), []);
    const old = again.eventsAfter(0, { threadId: 't' }).find((e) => e.type === 'item.completed');
    assert.ok(old && old.type === 'item.completed' && old.app === undefined);
    again.append(
      { type: 'item.started', threadId: 't', runId: 'r', itemId: 'app', ordinal: 1, kind: 'toolCall', toolName: 'mcp__w__x', arguments: '{}' },
      { type: 'item.completed', threadId: 't', runId: 'r', itemId: 'app', status: 'completed', content: 'y', isError: false, app: { uri: 'ui://w/x', html: '<p/>', server: 'w', title: null } },
      { type: 'mcpApp.stateSaved', threadId: 't', itemId: 'app', state: '{"a":1}' },
    );
    const row = mcpAppRow(again.db, 'app');
    assert.deepEqual([row?.uri, row?.server, row?.title, row?.html, row?.state, row?.runId], ['ui://w/x', 'w', null, '<p/>', '{"a":1}', 'r']);
    const seq = again.lastSeq();
    assert.throws(() => again.append({ type: 'mcpApp.stateSaved', threadId: 't', itemId: 'old', state: '{}' }), (e: unknown) => (e as { code?: string }).code === 'notFound');
    assert.equal(again.lastSeq(), seq, 'the refused event was not written');
    again.close();
  });
});
