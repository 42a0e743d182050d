/**
 * The core's versioned schema migrations. `PRAGMA user_version` holds the applied version; the
 * capability modules' migrations continue the same sequence (./schema.ts merges them; search is
 * 13, MCP Apps 14). Append new migrations, never edit old ones.
 */
import type { SqlDatabase } from './driver';

export interface Migration {
  version: number;
  description: string;
  up(db: SqlDatabase): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'event log and projections: threads, messages (tree), runs, turn items, turn chunks',
    up(db) {
      db.exec(`
        CREATE TABLE events (
          seq       INTEGER PRIMARY KEY AUTOINCREMENT,
          thread_id TEXT,
          type      TEXT    NOT NULL,
          payload   TEXT    NOT NULL,
          time      INTEGER NOT NULL
        );
        CREATE INDEX events_by_thread ON events(thread_id, seq);

        CREATE TABLE threads (
          id         TEXT PRIMARY KEY,
          title      TEXT    NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          deleted    INTEGER NOT NULL DEFAULT 0,
          last_seq   INTEGER NOT NULL DEFAULT 0
        );

        CREATE TABLE messages (
          id         TEXT PRIMARY KEY,
          thread_id  TEXT    NOT NULL REFERENCES threads(id),
          parent_id  TEXT    REFERENCES messages(id),
          role       TEXT    NOT NULL,
          content    TEXT    NOT NULL,
          run_id     TEXT,
          status     TEXT    NOT NULL,
          created_at INTEGER NOT NULL
        );
        CREATE INDEX messages_by_thread ON messages(thread_id, created_at);

        CREATE TABLE runs (
          id            TEXT PRIMARY KEY,
          thread_id     TEXT    NOT NULL REFERENCES threads(id),
          ordinal       INTEGER NOT NULL,
          provider      TEXT    NOT NULL,
          model         TEXT    NOT NULL,
          status        TEXT    NOT NULL,
          owner_pid     INTEGER,
          user_message_id TEXT,
          started_at    INTEGER NOT NULL,
          ended_at      INTEGER,
          error         TEXT,
          input_tokens  INTEGER NOT NULL DEFAULT 0,
          output_tokens INTEGER NOT NULL DEFAULT 0,
          UNIQUE (thread_id, ordinal)
        );

        CREATE TABLE turn_items (
          id         TEXT PRIMARY KEY,
          run_id     TEXT    NOT NULL REFERENCES runs(id),
          ordinal    INTEGER NOT NULL,
          kind       TEXT    NOT NULL,
          status     TEXT    NOT NULL,
          tool_name  TEXT,
          arguments  TEXT,
          content    TEXT    NOT NULL DEFAULT '',
          is_error   INTEGER NOT NULL DEFAULT 0,
          created_at INTEGER NOT NULL,
          UNIQUE (run_id, ordinal)
        );

        CREATE TABLE turn_chunks (
          turn_id TEXT    NOT NULL,
          seq     INTEGER NOT NULL,
          kind    TEXT    NOT NULL,
          data    TEXT    NOT NULL,
          PRIMARY KEY (turn_id, seq)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 2,
    description: 'thread head pointer (rewind to a checkpoint) and checkpoint index',
    up(db) {
      db.exec(`
        ALTER TABLE threads ADD COLUMN head_message_id TEXT;
        ALTER TABLE threads ADD COLUMN head_set INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE checkpoints (
          thread_id   TEXT    NOT NULL REFERENCES threads(id),
          ordinal     INTEGER NOT NULL,
          ref         TEXT    NOT NULL,
          run_id      TEXT,
          trigger     TEXT    NOT NULL,
          tool_name   TEXT,
          changed     INTEGER NOT NULL,
          skipped     INTEGER NOT NULL,
          over_budget_ms INTEGER,
          rewind_to   TEXT,
          created_at  INTEGER NOT NULL,
          PRIMARY KEY (thread_id, ordinal)
        );
      `);
    },
  },
  {
    version: 3,
    description: 'cache and reasoning tokens per run; thread list paging index',
    up(db) {
      db.exec(`
        ALTER TABLE runs ADD COLUMN cache_read_tokens  INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN reasoning_tokens   INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX threads_by_update ON threads(deleted, updated_at DESC, id);
        CREATE INDEX runs_running ON runs(thread_id, status);
      `);
    },
  },
  {
    version: 4,
    description: "a run's owner process identified by pid and start time (pids are reused)",
    up(db) {
      db.exec('ALTER TABLE runs ADD COLUMN owner_started_at INTEGER');
    },
  },
  {
    version: 5,
    description: 'the thread run queue (SPEC 2.4)',
    up(db) {
      db.exec(`
        CREATE TABLE queue (
          entry_id         TEXT PRIMARY KEY,
          thread_id        TEXT    NOT NULL REFERENCES threads(id),
          prompt           TEXT    NOT NULL,
          model            TEXT,
          position         INTEGER NOT NULL,
          owner_pid        INTEGER NOT NULL,
          owner_started_at INTEGER,
          steer            INTEGER NOT NULL DEFAULT 0,
          created_at       INTEGER NOT NULL,
          -- queued, then one of started | steered | cancelled (kept: where a prompt went is answerable later)
          status           TEXT    NOT NULL DEFAULT 'queued',
          run_id           TEXT,
          ended_at         INTEGER
        );
        CREATE INDEX queue_by_thread ON queue(thread_id, status, position);
      `);
    },
  },
  {
    version: 6,
    description: 'rate-limit waits of runs (SPEC 2.4), re-armed after a restart',
    up(db) {
      db.exec(`
        CREATE TABLE rate_limit_waits (
          run_id           TEXT PRIMARY KEY REFERENCES runs(id),
          thread_id        TEXT    NOT NULL,
          reset_at         INTEGER NOT NULL,
          source           TEXT    NOT NULL,
          attempt          INTEGER NOT NULL,
          message          TEXT    NOT NULL,
          auto_resume      INTEGER NOT NULL,
          snoozed_until    INTEGER,
          resume_requested INTEGER NOT NULL DEFAULT 0,
          usage_so_far     TEXT    NOT NULL,
          since            INTEGER NOT NULL,
          -- set when the run resumed or ended: the wait is over
          ended_at         INTEGER
        );
      `);
    },
  },
  {
    version: 7,
    description: 'subagent threads under their parent; background work of runs (SPEC 2.4)',
    up(db) {
      db.exec(`
        ALTER TABLE threads ADD COLUMN parent_thread_id TEXT;
        ALTER TABLE threads ADD COLUMN parent_run_id TEXT;
        CREATE INDEX threads_by_parent ON threads(parent_thread_id);
        CREATE TABLE background_work (
          handle        TEXT PRIMARY KEY,
          thread_id     TEXT    NOT NULL,
          run_id        TEXT    NOT NULL,
          kind          TEXT    NOT NULL,
          title         TEXT    NOT NULL,
          awaited       INTEGER NOT NULL,
          child_thread_id TEXT,
          status        TEXT    NOT NULL DEFAULT 'running',
          result        TEXT,
          reported_by   TEXT,
          started_at    INTEGER NOT NULL,
          ended_at      INTEGER
        );
        CREATE INDEX background_by_thread ON background_work(thread_id, status);
      `);
    },
  },
  {
    version: 8,
    description: 'plan mode and permission mode of threads, plans with steps, the permission decision of tool calls',
    up(db) {
      db.exec(`
        ALTER TABLE threads ADD COLUMN work_mode TEXT NOT NULL DEFAULT 'act';
        ALTER TABLE threads ADD COLUMN permission_mode TEXT;
        ALTER TABLE turn_items ADD COLUMN permission TEXT;
        CREATE TABLE plans (
          plan_id    TEXT PRIMARY KEY,
          thread_id  TEXT    NOT NULL,
          run_id     TEXT,
          title      TEXT    NOT NULL,
          -- JSON [{id, text, status, note}]
          steps      TEXT    NOT NULL,
          status     TEXT    NOT NULL DEFAULT 'proposed',
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        );
        CREATE INDEX plans_by_thread ON plans(thread_id, created_at);
      `);
    },
  },
  {
    version: 9,
    description: 'the posture of runs (SPEC 6.3) and assistant messages edited in place',
    up(db) {
      db.exec(`
        -- JSON {provider, model, reasoningEffort, webSearch, temperature, topP, rules, mentions}; NULL for older runs
        ALTER TABLE runs ADD COLUMN posture TEXT;
        ALTER TABLE messages ADD COLUMN edited_at INTEGER;
      `);
    },
  },
  {
    version: 10,
    description: 'prompt history: the newest prompts as typed (with their @tokens), across threads (SPEC 6.3)',
    up(db) {
      db.exec(`
        CREATE TABLE prompt_history (
          id         INTEGER PRIMARY KEY AUTOINCREMENT,
          prompt     TEXT    NOT NULL,
          -- the thread it went to; null when it failed before a thread existed
          thread_id  TEXT,
          created_at INTEGER NOT NULL
        );
      `);
    },
  },
  {
    version: 11,
    description: 'partial compaction (SPEC 3.7): compacted ranges of threads with their summaries; tool calls\' provider signatures',
    up(db) {
      db.exec(`
        CREATE TABLE compactions (
          compaction_id   TEXT PRIMARY KEY,
          thread_id       TEXT    NOT NULL,
          mode            TEXT    NOT NULL,
          trigger         TEXT    NOT NULL,
          from_message_id TEXT    NOT NULL,
          up_to_message_id TEXT   NOT NULL,
          -- the path index of up_to_message_id when the compaction was written
          compact_message_index INTEGER NOT NULL,
          covered_messages INTEGER NOT NULL,
          summary         TEXT    NOT NULL,
          model           TEXT    NOT NULL,
          input_tokens    INTEGER NOT NULL DEFAULT 0,
          output_tokens   INTEGER NOT NULL DEFAULT 0,
          run_id          TEXT,
          -- the later compaction whose range took this one in (null while it applies)
          superseded_by   TEXT,
          created_at      INTEGER NOT NULL
        );
        CREATE INDEX compactions_by_thread ON compactions(thread_id, created_at);
        -- the provider's opaque signature of a tool call (Gemini thoughtSignature), kept byte for byte
        ALTER TABLE turn_items ADD COLUMN thought_signature TEXT;
      `);
    },
  },
  {
    version: 12,
    description: 'imported sessions: the source of a thread, and per-file import bookkeeping',
    up(db) {
      db.exec(`
        -- 'claude-code' | 'codex' | 'cursor' for imported threads, NULL for Vox's own
        ALTER TABLE threads ADD COLUMN source TEXT;
        ALTER TABLE threads ADD COLUMN source_id TEXT;
        -- JSON {cwd, gitBranch, version}
        ALTER TABLE threads ADD COLUMN source_meta TEXT;
        CREATE TABLE import_files (
          path        TEXT PRIMARY KEY,
          source      TEXT    NOT NULL,
          thread_id   TEXT,
          size        INTEGER NOT NULL,
          mtime_ms    INTEGER NOT NULL,
          -- bytes consumed (complete lines); a grown file is read from here
          offset      INTEGER NOT NULL,
          lines       INTEGER NOT NULL,
          -- the parser's state after the last import (JSON), or Cursor's last root blob
          state       TEXT,
          imported_at INTEGER NOT NULL
        );
        CREATE INDEX threads_by_source ON threads(source, source_id);
      `);
    },
  },
  {
    version: 15,
    description: 'the workspace a thread belongs to (a workspace-bound session reaches only its own)',
    up(db) {
      db.exec(`
        -- the canonical root of the workspace whose engine created it; NULL for threads of older builds
        ALTER TABLE threads ADD COLUMN workspace TEXT;
        CREATE INDEX threads_by_workspace ON threads(workspace, deleted, updated_at DESC, id);
      `);
    },
  },
];

/** The core's last version; the modules' migrations continue the sequence (./schema.ts). */
export const CORE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
