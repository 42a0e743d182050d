/**
 * The message-body search index (SPEC 6.4): its schema (store migration 13, with the backfill of
 * an existing database) and the writes that keep it in step with the event log. The store's
 * projections (../store/projections.ts) call these inside the transaction that appends the
 * event, so the index never disagrees with the tables.
 *
 * Two tables:
 *   search_fts   FTS5, `tokenize='trigram'` (substring matching, case-insensitive), `detail=none`:
 *                one column `text`; the index keeps which rows hold each trigram, not where —
 *                a third of the size of `detail=full` and faster to intersect, since queries
 *                are LIKE patterns that SQLite checks against the row anyway (./body-search.ts).
 *   search_docs  one row per document (rowid = the FTS rowid): what it is (`m:<messageId>` or
 *                `i:<itemId>`), its thread, message or run, and `active` — whether it lies on the
 *                thread's active branch.
 * Indexed: every message's content (user and assistant; system text too) on message.added, replaced
 * on message.edited; tool output (turn items of kind toolCall) on item.completed. Markdown links
 * `[label](url)` (and images `![alt](url)`) are reduced to their label before indexing, so a URL's
 * letters do not match and a label split by the link syntax still does.
 *
 * Branches: inactive branches are NOT searched (a result must be visible when its thread opens
 * on its active path). Every document keeps an `active` flag and the message it follows
 * (`message_id`: the message itself, or for tool output its run's prompt). message.added on the
 * head's child (the usual turn) only adds an active document; a new sibling branch (regenerate,
 * edit, a new root), thread.branchSwitched and thread.rewound move the flags from the old head's
 * path to the new one's (`moveActive`: both paths walked up to their common ancestor only, so the
 * cost is the length of the branches, not of the thread). Deleting a thread deletes its documents.
 */
import type { SqlDatabase, SqlStatement } from '../store/driver';

/** The migration that creates the index (the store's list, ../store/migrations.ts, includes it). */
export const SEARCH_MIGRATION_VERSION = 13;

const LINK = /(!?)\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"\n]*")?\)/g;

/** Markdown links and images reduced to their label / alt text. */
export function stripLinks(text: string): string {
  return text.replace(LINK, (_m, _bang: string, label: string) => label);
}

export const SEARCH_SCHEMA = `
  CREATE VIRTUAL TABLE search_fts USING fts5(text, tokenize = 'trigram', detail = 'none');
  CREATE TABLE search_docs (
    rowid      INTEGER PRIMARY KEY,
    -- 'm:<messageId>' or 'i:<itemId>'
    doc_key    TEXT    NOT NULL UNIQUE,
    thread_id  TEXT    NOT NULL,
    -- the message it follows on and off the active path: itself, or for tool output its run's prompt
    message_id TEXT,
    run_id     TEXT,
    kind       TEXT    NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1
  );
  CREATE INDEX search_docs_by_thread ON search_docs(thread_id);
  CREATE INDEX search_docs_by_message ON search_docs(message_id);
`;

type DocKind = 'message' | 'tool';

/** Prepared statements per connection: the backfill writes a document per message, and preparing each time cost as much as the write. */
const statements = new WeakMap<SqlDatabase, Map<string, SqlStatement>>();

function stmt(db: SqlDatabase, sql: string): SqlStatement {
  let m = statements.get(db);
  if (!m) statements.set(db, (m = new Map()));
  let st = m.get(sql);
  if (!st) m.set(sql, (st = db.prepare(sql)));
  return st;
}

function insertDoc(db: SqlDatabase, key: string, threadId: string, messageId: string | null, runId: string | null, kind: DocKind, text: string, active: boolean): void {
  const info = stmt(db, 'INSERT INTO search_docs (doc_key, thread_id, message_id, run_id, kind, active) VALUES (?, ?, ?, ?, ?, ?)')
    .run(key, threadId, messageId, runId, kind, active ? 1 : 0);
  stmt(db, 'INSERT INTO search_fts (rowid, text) VALUES (?, ?)').run(info.lastInsertRowid, stripLinks(text));
}

function replaceText(db: SqlDatabase, key: string, text: string): boolean {
  const row = stmt(db, 'SELECT rowid AS r FROM search_docs WHERE doc_key = ?').get(key) as { r: number } | undefined;
  if (!row) return false;
  stmt(db, 'DELETE FROM search_fts WHERE rowid = ?').run(row.r);
  stmt(db, 'INSERT INTO search_fts (rowid, text) VALUES (?, ?)').run(row.r, stripLinks(text));
  return true;
}

/** message.added: the message becomes a document; a new branch recomputes the thread's flags. `previousHead` is the head before the event. */
export function indexMessage(db: SqlDatabase, m: { threadId: string; messageId: string; parentId: string | null; content: string; runId: string | null }, previousHead: string | null): void {
  if (m.parentId !== previousHead) moveActive(db, previousHead, m.parentId);
  insertDoc(db, `m:${m.messageId}`, m.threadId, m.messageId, m.runId, 'message', m.content, true);
}

/** message.edited: the document's text is replaced. */
export function reindexMessage(db: SqlDatabase, messageId: string, content: string): void {
  replaceText(db, `m:${messageId}`, content);
}

/** item.completed of a tool call: its output becomes a document (again, if it somehow completes twice). */
export function indexToolOutput(db: SqlDatabase, e: { threadId: string; runId: string; itemId: string; content: string }): void {
  const kind = stmt(db, 'SELECT kind FROM turn_items WHERE id = ?').get(e.itemId) as { kind: string } | undefined;
  if (kind?.kind !== 'toolCall' || e.content.length === 0) return;
  if (replaceText(db, `i:${e.itemId}`, e.content)) return;
  // The run's prompt is the thread's head, or an ancestor of it, while its items complete.
  const prompt = stmt(db, 'SELECT user_message_id AS u FROM runs WHERE id = ?').get(e.runId) as { u: string | null } | undefined;
  insertDoc(db, `i:${e.itemId}`, e.threadId, prompt?.u ?? null, e.runId, 'tool', e.content, true);
}

/** thread.deleted: its documents go. */
export function dropThread(db: SqlDatabase, threadId: string): void {
  db.prepare('DELETE FROM search_fts WHERE rowid IN (SELECT rowid FROM search_docs WHERE thread_id = ?)').run(threadId);
  db.prepare('DELETE FROM search_docs WHERE thread_id = ?').run(threadId);
}

/** The ids of the messages on the thread's active path (root to head). */
export function activeMessageIds(db: SqlDatabase, threadId: string): Set<string> {
  const rows = db.prepare('SELECT id, parent_id AS p FROM messages WHERE thread_id = ? ORDER BY created_at, rowid').all(threadId) as { id: string; p: string | null }[];
  const head = db.prepare('SELECT head_message_id AS h, head_set AS s FROM threads WHERE id = ?').get(threadId) as { h: string | null; s: number } | undefined;
  const parent = new Map(rows.map((r) => [r.id, r.p]));
  const path = new Set<string>();
  let cur: string | null | undefined = head?.s ? head.h : rows.at(-1)?.id;
  while (cur && !path.has(cur)) {
    path.add(cur);
    cur = parent.get(cur);
  }
  return path;
}

/** Recomputes every document's `active` flag of the thread from scratch (the backfill). */
export function refreshActive(db: SqlDatabase, threadId: string): void {
  const path = activeMessageIds(db, threadId);
  const docs = db.prepare('SELECT rowid AS r, message_id AS m, active AS a FROM search_docs WHERE thread_id = ?').all(threadId) as { r: number; m: string | null; a: number }[];
  const set = stmt(db, 'UPDATE search_docs SET active = ? WHERE rowid = ?');
  for (const d of docs) {
    const on = d.m !== null && path.has(d.m);
    if ((on ? 1 : 0) !== d.a) set.run(on ? 1 : 0, d.r);
  }
}

function parentOf(db: SqlDatabase, id: string): string | null {
  const row = stmt(db, 'SELECT parent_id AS p FROM messages WHERE id = ?').get(id) as { p: string | null } | undefined;
  return row?.p ?? null;
}

/**
 * The active path moves from `fromHead`'s to `toHead`'s (either null: no message): the two are
 * walked upwards in turn until one reaches a message the other passed (their common ancestor),
 * then the old side's documents go inactive and the new side's active.
 */
export function moveActive(db: SqlDatabase, fromHead: string | null, toHead: string | null): void {
  if (fromHead === toHead) return;
  const oldSide: string[] = [];
  const newSide: string[] = [];
  const seenOld = new Set<string>();
  const seenNew = new Set<string>();
  let a = fromHead;
  let b = toHead;
  let common: string | null = null;
  while (a !== null || b !== null) {
    if (a !== null) {
      if (seenNew.has(a)) { common = a; break; }
      seenOld.add(a);
      oldSide.push(a);
      a = parentOf(db, a);
    }
    if (b !== null) {
      if (seenOld.has(b)) { common = b; break; }
      seenNew.add(b);
      newSide.push(b);
      b = parentOf(db, b);
    }
  }
  // Each side up to (without) the common ancestor; the side that found it never held it.
  const upTo = (side: string[]) => {
    const at = common === null ? -1 : side.indexOf(common);
    return at < 0 ? side : side.slice(0, at);
  };
  const set = stmt(db, 'UPDATE search_docs SET active = ? WHERE message_id = ?');
  for (const id of upTo(oldSide)) set.run(0, id);
  for (const id of upTo(newSide)) set.run(1, id);
}

/** Rows read per page by the backfill (a statement cannot stay open while the same connection writes). */
const BACKFILL_PAGE = 2_000;

/** The thread's head before an event moves it (as the store reads it: the last message until a head is set). */
export function currentHead(db: SqlDatabase, threadId: string): string | null {
  const row = stmt(db, 'SELECT head_message_id AS h, head_set AS s FROM threads WHERE id = ?').get(threadId) as { h: string | null; s: number } | undefined;
  if (row?.s) return row.h;
  const last = stmt(db, 'SELECT id FROM messages WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(threadId) as { id: string } | undefined;
  return last?.id ?? null;
}

/** Migration 13: the schema, then every existing message and tool output of live threads indexed, flags computed per thread. */
export function createSearchIndex(db: SqlDatabase): void {
  db.exec(SEARCH_SCHEMA);
  const live = 'SELECT id FROM threads WHERE deleted = 0';
  const messages = db.prepare(`SELECT rowid AS k, id, thread_id AS t, run_id AS r, content FROM messages WHERE rowid > ? AND thread_id IN (${live}) ORDER BY rowid LIMIT ?`);
  for (let after = 0; ;) {
    const page = messages.all(after, BACKFILL_PAGE) as { k: number; id: string; t: string; r: string | null; content: string }[];
    for (const m of page) insertDoc(db, `m:${m.id}`, m.t, m.id, m.r, 'message', m.content, true);
    if (page.length < BACKFILL_PAGE) break;
    after = page[page.length - 1]!.k;
  }
  const items = db.prepare(
    `SELECT i.rowid AS k, i.id, i.run_id AS r, r.thread_id AS t, r.user_message_id AS u, i.content FROM turn_items i JOIN runs r ON r.id = i.run_id
      WHERE i.rowid > ? AND i.kind = 'toolCall' AND i.content <> '' AND i.status <> 'started' AND r.thread_id IN (${live}) ORDER BY i.rowid LIMIT ?`,
  );
  for (let after = 0; ;) {
    const page = items.all(after, BACKFILL_PAGE) as { k: number; id: string; r: string; t: string; u: string | null; content: string }[];
    for (const i of page) insertDoc(db, `i:${i.id}`, i.t, i.u, i.r, 'tool', i.content, true);
    if (page.length < BACKFILL_PAGE) break;
    after = page[page.length - 1]!.k;
  }
  for (const { id } of db.prepare(live).all() as { id: string }[]) refreshActive(db, id);
}
