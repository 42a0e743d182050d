/**
 * Which workspace a thread belongs to (the `threads.workspace` column, migration 15): the stamp a
 * store puts on every `thread.created` it appends (the canonical root of the engine's workspace),
 * the look-up a workspace-bound session checks a thread id against (../session/thread-scope.ts),
 * and the thread list page, optionally of one workspace. Threads of older builds have no
 * workspace (NULL): they belong to none, so only a session granted every workspace reaches them.
 * A database opened read-only before migration 15 has no column: every thread reads as NULL.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SqlDatabase } from './driver';
import type { VoxEvent } from '../../protocol/events';
import { StoreError } from './errors';
import { THREAD_COLUMNS, parseThreadCursor, threadCursor, type ThreadPage, type ThreadRow } from './rows';

/** Most threads one `listThreadsPage` returns. */
export const THREAD_PAGE_LIMIT = 200;

/** The workspace key of a root: its real path (symlinks resolved, as `vox` in a terminal and VS Code may name it differently), else the path resolved. */
export function canonicalWorkspace(root: string): string {
  try {
    return fs.realpathSync.native(root);
  } catch {
    return path.resolve(root);
  }
}

/**
 * The event as this store appends it: a `thread.created` gets the store's workspace — when it has
 * none (`override` false), or always (`override` true: a bundle's thread joins the workspace that
 * imports it, whatever workspace it was exported from).
 */
export function stampWorkspace(e: VoxEvent, workspace: string | null, override: boolean): VoxEvent {
  if (e.type !== 'thread.created' || workspace === null) return e;
  if (!override && typeof e.workspace === 'string') return e;
  return { ...e, workspace };
}

const hasColumn = new WeakMap<SqlDatabase, boolean>();

/** Whether the database has `threads.workspace` (not before migration 15, e.g. an old one opened read-only). */
export function hasWorkspaceColumn(db: SqlDatabase): boolean {
  let has = hasColumn.get(db);
  if (has === undefined) {
    has = (db.prepare('PRAGMA table_info(threads)').all() as { name: string }[]).some((c) => c.name === 'workspace');
    hasColumn.set(db, has);
  }
  return has;
}

/** The live thread's workspace (null: none recorded), or undefined when no live thread has this id. */
export function threadWorkspace(db: SqlDatabase, threadId: string): string | null | undefined {
  if (!hasWorkspaceColumn(db)) return db.prepare('SELECT 1 FROM threads WHERE id = ? AND deleted = 0').get(threadId) ? null : undefined;
  const row = db.prepare('SELECT workspace FROM threads WHERE id = ? AND deleted = 0').get(threadId) as { workspace: string | null } | undefined;
  return row === undefined ? undefined : row.workspace;
}

/**
 * One page of live top-level threads (subagent threads are listed under their parent:
 * ./family-reads.ts), most recently updated first, after `before` (a previous page's cursor);
 * with `workspace`, only that workspace's.
 */
export function listThreadsPage(db: SqlDatabase, opts: { limit: number; before?: string; workspace?: string }): ThreadPage {
  const limit = Math.max(1, Math.min(opts.limit, THREAD_PAGE_LIMIT));
  const after = opts.before === undefined ? null : parseThreadCursor(opts.before);
  if (opts.before !== undefined && !after) throw new StoreError('notFound', `"${opts.before}" is not a thread list cursor`);
  if (opts.workspace !== undefined && !hasWorkspaceColumn(db)) return { threads: [], nextCursor: null };
  const where = ['deleted = 0', 'parent_thread_id IS NULL'];
  const args: unknown[] = [];
  if (opts.workspace !== undefined) {
    where.push('workspace = ?');
    args.push(opts.workspace);
  }
  if (after) {
    where.push('(updated_at < ? OR (updated_at = ? AND id > ?))');
    args.push(after.updatedAt, after.updatedAt, after.id);
  }
  const rows = db.prepare(`SELECT ${THREAD_COLUMNS} FROM threads WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, id LIMIT ?`).all(...args, limit + 1) as ThreadRow[];
  const threads = rows.slice(0, limit);
  return { threads, nextCursor: rows.length > limit ? threadCursor(threads[threads.length - 1]!) : null };
}
