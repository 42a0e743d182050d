/**
 * Cursor agent chats → Vox events.
 *
 * Format (Cursor publishes none; sources: FIELD-NOTES "Real agent CLIs, offline", agentgrep's
 * Cursor CLI backend notes https://agentgrep.org/backends/cursor-cli/ and its PR
 * https://github.com/tony/agentgrep/pull/27, and public readers' tests that build such stores):
 * `<dir or ~/.cursor>/chats/<md5 of the workspace path>/<agentId>/store.db`, SQLite in WAL mode with
 *   - `meta(key TEXT PRIMARY KEY, value TEXT)`: key `'0'` holds hex-encoded UTF-8 JSON
 *     {agentId, latestRootBlobId, name, mode, createdAt, lastUsedModel?};
 *   - `blobs(id TEXT PRIMARY KEY, data BLOB)`: content-addressed (id = hex SHA-256 of data). The
 *     root blob is a protobuf whose repeated field 1 lists the 32-byte ids of the message blobs
 *     in order (field 9, when present, the workspace URI); message blobs are JSON
 *     {role: system|user|assistant|tool, content: string | parts}, parts `text`, `reasoning`,
 *     `tool-call` {toolCallId, toolName, args}, `tool-result` {toolCallId, result, isError?};
 *     the user's own words are wrapped in `<user_query>` beside injected `<user_info>` context.
 * The store is opened READ-ONLY with the SQLite driver Vox uses (src/engine/store/driver.ts), so
 * pages still in the WAL of a running Cursor are read too, and nothing is ever written to it.
 */
import { sqliteDriver } from '../store/driver';
import { loadDriver } from '../store/database';
import type { ThreadBuilder } from './builder';
import { readFields, WIRE_LEN } from './protobuf';
import { ImportError, skip, timeOf, type ImportTally } from './types';

/** How long a read waits for Cursor's own writer (ms). */
const CURSOR_BUSY_TIMEOUT_MS = 2_000;
/** Most messages read from one store (a longer conversation is cut there, counted as `tooManyMessages`). */
export const MAX_CURSOR_MESSAGES = 50_000;
/** Root blob field holding the message blob ids, and the one holding the workspace URI. */
const ROOT_MESSAGES_FIELD = 1;
const ROOT_WORKSPACE_FIELD = 9;
/** Names Cursor gives a chat before it has one (the title then comes from the first prompt). */
const CURSOR_PLACEHOLDER_NAMES = new Set(['New Agent', 'New Chat', 'Untitled']);
/** Byte length of a message blob id (SHA-256). */
const BLOB_ID_BYTES = 32;

export interface CursorMeta { agentId: string | null; latestRootBlobId: string; name: string | null; createdAt: number | null; model: string | null }
export interface CursorMessage { blobId: string; value: unknown }
export interface CursorStore { meta: CursorMeta; workspace: string | null; messages: CursorMessage[]; unreadable: number }

function hexToUtf8(hex: string): string {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new ImportError('notACursorStore', 'meta value is not hex');
  return Buffer.from(hex, 'hex').toString('utf8');
}

/** Reads the store's meta, root and message blobs (read-only; WAL pages included). */
export function readCursorStore(file: string): CursorStore {
  let db;
  try {
    db = sqliteDriver(loadDriver).open(file, { readonly: true, fileMustExist: true, timeoutMs: CURSOR_BUSY_TIMEOUT_MS });
  } catch (e) {
    throw new ImportError('unreadable', `${file} cannot be opened as SQLite: ${(e as Error).message}`, e);
  }
  try {
    let metaRow: { value: unknown } | undefined;
    try {
      metaRow = db.prepare("SELECT value FROM meta WHERE key = '0'").get() as { value: unknown } | undefined;
    } catch (e) {
      throw new ImportError('notACursorStore', `${file} has no Cursor meta table: ${(e as Error).message}`, e);
    }
    if (!metaRow) throw new ImportError('notACursorStore', `${file} has no meta row '0'`);
    const metaText = typeof metaRow.value === 'string' ? metaRow.value : Buffer.from(metaRow.value as Uint8Array).toString('utf8');
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(hexToUtf8(metaText.trim())) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof ImportError) throw e;
      throw new ImportError('notACursorStore', `${file}: meta '0' is not hex-encoded JSON`, e);
    }
    const root = typeof m.latestRootBlobId === 'string' ? m.latestRootBlobId : null;
    if (!root) throw new ImportError('notACursorStore', `${file}: meta has no latestRootBlobId`);
    const blob = db.prepare('SELECT data FROM blobs WHERE id = ?');
    const data = (id: string): Uint8Array | null => {
      const r = blob.get(id) as { data: Uint8Array | string } | undefined;
      if (!r) return null;
      return typeof r.data === 'string' ? Buffer.from(r.data, 'utf8') : r.data;
    };
    const rootData = data(root);
    if (!rootData) throw new ImportError('notACursorStore', `${file}: root blob ${root} is missing`);
    const fields = readFields(rootData);
    let workspace: string | null = null;
    const messages: CursorMessage[] = [];
    let unreadable = 0;
    for (const f of fields) {
      if (f.wire !== WIRE_LEN || !f.bytes) continue;
      if (f.field === ROOT_WORKSPACE_FIELD) workspace = Buffer.from(f.bytes).toString('utf8');
      if (f.field !== ROOT_MESSAGES_FIELD || f.bytes.length !== BLOB_ID_BYTES) continue;
      if (messages.length + unreadable >= MAX_CURSOR_MESSAGES) break;
      const id = Buffer.from(f.bytes).toString('hex');
      const d = data(id);
      if (!d) {
        unreadable++;
        continue;
      }
      try {
        messages.push({ blobId: id, value: JSON.parse(Buffer.from(d).toString('utf8')) });
      } catch {
        unreadable++; // not JSON: a message Vox cannot read
      }
    }
    const meta: CursorMeta = {
      agentId: typeof m.agentId === 'string' ? m.agentId : null,
      latestRootBlobId: root,
      name: typeof m.name === 'string' && m.name.trim() && !CURSOR_PLACEHOLDER_NAMES.has(m.name.trim()) ? m.name.trim() : null,
      createdAt: typeof m.createdAt === 'number' || typeof m.createdAt === 'string' ? timeOf(Number(m.createdAt) || m.createdAt, 0) || null : null,
      model: typeof m.lastUsedModel === 'string' ? m.lastUsedModel : null,
    };
    return { meta, workspace, messages, unreadable };
  } finally {
    db.close();
  }
}

/** The workspace path of a `file://` URI (or the text as it is). */
export function workspacePath(uri: string | null): string | null {
  if (!uri) return null;
  if (!uri.startsWith('file://')) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

type Part = { type?: string; text?: string; toolCallId?: string; toolName?: string; args?: unknown; input?: unknown; result?: unknown; output?: unknown; isError?: boolean };

/** The user's words: the `<user_query>` parts when there are any, else the text without injected context tags. */
export function userQuery(text: string): string | null {
  const queries = [...text.matchAll(/<user_query>([\s\S]*?)<\/user_query>/g)].map((m) => m[1]!.trim());
  if (queries.length > 0) return queries.join('\n\n');
  if (/^\s*<(user_info|system_reminder|additional_data|attached_files|rules)>/.test(text)) return null;
  return text.trim() || null;
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Part[]) : [];
}

const resultText = (r: unknown): string => (typeof r === 'string' ? r : JSON.stringify(r ?? ''));

/** Maps messages [from, …) onto the builder; message `i`'s key is its position and blob id (blobs are shared by equal content). */
export function cursorMessages(messages: CursorMessage[], from: number, b: ThreadBuilder, tally: ImportTally, baseTime: number): void {
  for (let i = from; i < messages.length; i++) {
    const { blobId, value } = messages[i]!;
    tally.lines++;
    const time = baseTime + i; // Cursor keeps no per-message time: the chat's creation, in order
    const key = `${i}:${blobId}`;
    if (typeof value !== 'object' || value === null) {
      skip(tally, 'notAnObject');
      continue;
    }
    const m = value as { role?: string; content?: unknown };
    const parts = partsOf(m.content);
    switch (m.role) {
      case 'system':
        skip(tally, 'systemMessage');
        break;
      case 'user': {
        const text = parts.filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n');
        const q = userQuery(text);
        if (q === null) skip(tally, 'contextMessage');
        else b.prompt(key, q, time);
        break;
      }
      case 'assistant':
        parts.forEach((p, j) => {
          const k = `${key}:${j}`;
          if (p.type === 'text') b.text(k, p.text ?? '', time);
          else if (p.type === 'reasoning' || p.type === 'thinking') b.reasoning(k, p.text ?? '', time);
          else if (p.type === 'tool-call' && p.toolCallId) b.toolCall(p.toolCallId, p.toolName ?? 'unknown', JSON.stringify(p.args ?? p.input ?? {}), time);
          else skip(tally, `unknownPart:${p.type ?? 'none'}`);
        });
        break;
      case 'tool':
        for (const p of parts) {
          if (p.type !== 'tool-result' || !p.toolCallId) {
            skip(tally, `unknownPart:${p.type ?? 'none'}`);
            continue;
          }
          const out = p.result ?? p.output;
          const isError = p.isError === true || (typeof out === 'object' && out !== null && 'error' in out);
          if (!b.toolResult(p.toolCallId, resultText(out), isError, time)) skip(tally, 'orphanToolResult');
        }
        break;
      default:
        skip(tally, `unknownRole:${m.role ?? 'none'}`);
    }
  }
}
