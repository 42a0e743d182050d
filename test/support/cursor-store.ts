/**
 * A Cursor-shaped agent store (store.db) for tests, written the way Cursor writes it: WAL mode, no
 * automatic checkpoint (pages stay in the -wal file while the writer is open), `blobs` addressed
 * by SHA-256, the root blob a protobuf listing the message blob ids (field 1) and the workspace
 * URI (field 9), meta '0' hex-encoded JSON with latestRootBlobId (src/engine/importers/cursor.ts
 * cites the sources of the format).
 */
import * as crypto from 'node:crypto';
import type Database from 'better-sqlite3';
import { lenField } from '../../src/engine/importers/protobuf';

const sha = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

export class CursorWriter {
  readonly ids: string[] = [];
  constructor(readonly db: Database.Database, readonly agentId: string, readonly workspace: string, readonly name = 'New Agent') {
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);');
  }

  /** Appends messages and moves the root (and meta '0') to the new list. */
  add(...messages: unknown[]): void {
    for (const m of messages) {
      const data = Buffer.from(JSON.stringify(m), 'utf8');
      const id = sha(data);
      this.db.prepare('INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)').run(id, data);
      this.ids.push(id);
    }
    const root = Buffer.concat([...this.ids.map((id) => lenField(1, Buffer.from(id, 'hex'))), lenField(9, Buffer.from(`file://${encodeURI(this.workspace)}`))]);
    const rootId = sha(root);
    this.db.prepare('INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)').run(rootId, root);
    const meta = { agentId: this.agentId, latestRootBlobId: rootId, name: this.name, mode: 'agent', createdAt: 1_790_000_000_000, lastUsedModel: 'claude-4.5-sonnet' };
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('0', ?)").run(Buffer.from(JSON.stringify(meta)).toString('hex'));
  }
}

/** A short Cursor conversation: injected context, a `<user_query>`, reasoning, two tool calls (one failing), an answer. */
export const CURSOR_CONVERSATION = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: [{ type: 'text', text: '<user_info>OS: linux</user_info>' }] },
  { role: 'user', content: [{ type: 'text', text: '<user_info>Workspace: /home/dev</user_info>\n<user_query>Why does the build fail?</user_query>' }] },
  { role: 'assistant', content: [{ type: 'reasoning', text: 'Look at the log first.' }, { type: 'text', text: 'Let me run it.' }, { type: 'tool-call', toolCallId: 'tc1', toolName: 'run_terminal_cmd', args: { command: 'npm run build' } }, { type: 'tool-call', toolCallId: 'tc2', toolName: 'read_file', args: { path: 'package.json' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'tc2', toolName: 'read_file', result: '{"name":"x"}' }, { type: 'tool-result', toolCallId: 'tc1', toolName: 'run_terminal_cmd', result: { error: 'exit 1: tsc not found' }, isError: true }] },
  { role: 'assistant', content: 'tsc is missing: install typescript.' },
];
