/**
 * How MCP App events update the `mcp_apps` table (./schema.ts), inside the transaction that
 * appends them (../store/projections.ts calls these): a tool call's `item.completed` with an app
 * records the app; `mcpApp.stateSaved` replaces its state.
 */
import type { SqlDatabase } from '../store/driver';
import type { EventOf } from '../../protocol/events';
import { StoreError } from '../store/errors';

/** `item.completed` carrying an app: its row (a repeated completion replaces it, keeping a saved state). */
export function projectItemApp(db: SqlDatabase, e: EventOf<'item.completed'>, time: number): void {
  if (!e.app) return;
  db.prepare(
    `INSERT INTO mcp_apps (item_id, thread_id, run_id, server, uri, title, html, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(item_id) DO UPDATE SET server = excluded.server, uri = excluded.uri, title = excluded.title, html = excluded.html`,
  ).run(e.itemId, e.threadId, e.runId, e.app.server, e.app.uri, e.app.title, e.app.html, time);
}

export const MCP_APP_PROJECTORS = {
  'mcpApp.stateSaved'(db: SqlDatabase, e: EventOf<'mcpApp.stateSaved'>, time: number): void {
    const info = db.prepare('UPDATE mcp_apps SET state = ?, state_saved_at = ? WHERE item_id = ? AND thread_id = ?').run(e.state, time, e.itemId, e.threadId);
    if (info.changes === 0) throw new StoreError('notFound', `MCP App item ${e.itemId} of thread ${e.threadId} does not exist`);
  },
};
