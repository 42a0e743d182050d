/**
 * The store's table of MCP Apps (SPEC 5.3; migration 14): one row per tool call's item that
 * returned an app — the app itself (uri, server, title, HTML) and its saved state — projected
 * from `item.completed {app}` and `mcpApp.stateSaved` (./projections.ts).
 */
import type { StoreSchema } from '../store/schema';
import { MCP_APP_PROJECTORS, projectItemApp } from './projections';
import type { SqlDatabase } from '../store/driver';

/** The migration that creates `mcp_apps` (../store/migrations.ts). */
export const MCP_APPS_MIGRATION_VERSION = 14;

export function createMcpAppsTable(db: SqlDatabase): void {
  db.exec(`
    CREATE TABLE mcp_apps (
      -- the tool call's turn item (turn_items.id)
      item_id     TEXT PRIMARY KEY,
      thread_id   TEXT    NOT NULL,
      run_id      TEXT    NOT NULL,
      server      TEXT    NOT NULL,
      uri         TEXT    NOT NULL,
      title       TEXT,
      html        TEXT    NOT NULL,
      -- the app's saved state (NULL until it saves one), at most MCP_APP_STATE_MAX_BYTES of UTF-8
      state       TEXT,
      state_saved_at INTEGER,
      created_at  INTEGER NOT NULL
    );
    CREATE INDEX mcp_apps_by_thread ON mcp_apps(thread_id, created_at);
  `);
}

/** The MCP Apps module's part of the store: migration 14 and the projections of ./projections.ts. */
export const MCP_APPS_SCHEMA: StoreSchema = {
  module: 'mcp-apps',
  redactable: [{ table: 'mcp_apps', columns: ['title', 'html', 'state'] }],
  migrations: [{ version: MCP_APPS_MIGRATION_VERSION, description: 'MCP Apps (SPEC 5.3): the app each tool call returned and its saved state', up: createMcpAppsTable }],
  projectors: MCP_APP_PROJECTORS,
  observers: { 'item.completed': { after: (db, e, time) => projectItemApp(db, e, time) } },
};
