/** Reads of the `mcp_apps` table (./schema.ts): one app by its item, the apps of runs. */
import type { SqlDatabase } from '../store/driver';

export interface McpAppRow {
  itemId: string; threadId: string; runId: string; server: string; uri: string; title: string | null; html: string;
  state: string | null; stateSavedAt: number | null; createdAt: number;
}

const COLUMNS = `item_id AS itemId, thread_id AS threadId, run_id AS runId, server, uri, title, html, state,
  state_saved_at AS stateSavedAt, created_at AS createdAt`;

export function mcpAppRow(db: SqlDatabase, itemId: string): McpAppRow | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM mcp_apps WHERE item_id = ?`).get(itemId) as McpAppRow | undefined;
}

/** The apps of a thread, oldest first. */
export function mcpAppsOfThread(db: SqlDatabase, threadId: string): McpAppRow[] {
  return db.prepare(`SELECT ${COLUMNS} FROM mcp_apps WHERE thread_id = ? ORDER BY created_at, rowid`).all(threadId) as McpAppRow[];
}
