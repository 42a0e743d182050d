/**
 * Saving an MCP App's state (SPEC 5.3): the state of one turn item — the tool call's item that
 * returned the app — is at most MCP_APP_STATE_MAX_BYTES of UTF-8 (multi-byte characters count
 * in bytes), well-formed text (no lone surrogate), and replaces the item's earlier state. The
 * item must belong to the thread and carry an app; the check and the append are one IMMEDIATE
 * transaction, so a thread deleted in between cannot take the write. A state equal to the saved
 * one records nothing.
 */
import { MCP_APP_STATE_MAX_BYTES, utf8ByteLength } from '../../protocol/mcp-apps';
import type { VoxStore } from '../store/store';
import { McpAppError } from './errors';
import { mcpAppRow } from './reads';
import { redact } from '../platform/secrets';

export interface SavedState { bytes: number; max: number }

/** The state's size, or a typed error when it is too large or not well-formed text. */
export function checkState(state: unknown): number {
  if (typeof state !== 'string') throw new McpAppError('invalidState', `an MCP App's state is text (a string), not ${state === null ? 'null' : typeof state}`);
  if (!isWellFormed(state)) throw new McpAppError('invalidState', "an MCP App's state must be well-formed text (it holds a lone surrogate)");
  const bytes = utf8ByteLength(state);
  if (bytes > MCP_APP_STATE_MAX_BYTES) {
    throw new McpAppError('stateTooLarge', `the MCP App's state is ${bytes} bytes of UTF-8; an app may keep at most ${MCP_APP_STATE_MAX_BYTES} bytes (16 KiB) per turn item`, { bytes, max: MCP_APP_STATE_MAX_BYTES });
  }
  return bytes;
}

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      if (i + 1 >= s.length || (s.charCodeAt(i + 1) & 0xfc00) !== 0xdc00) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/** Records `mcpApp.stateSaved` for the app of `itemId` in `threadId`, or a typed error. */
export function saveAppState(store: VoxStore, threadId: string, itemId: string, given: unknown): SavedState {
  checkState(given);
  // Stored and shown to the model: no secrets in it (a key typed into a widget is replaced).
  const state = redact(given as string);
  const bytes = checkState(state);
  // The transaction answers rather than throws (the store wraps what a transaction throws as its own failure).
  const refused = store.transact((append): McpAppError | null => {
    const app = mcpAppRow(store.db, itemId);
    if (!app) {
      const item = store.db.prepare('SELECT i.kind AS kind, r.thread_id AS threadId FROM turn_items i JOIN runs r ON r.id = i.run_id WHERE i.id = ?').get(itemId) as { kind: string; threadId: string } | undefined;
      if (!item || item.threadId !== threadId) return new McpAppError('unknownItem', `thread ${threadId} has no turn item ${itemId}`, { threadId, itemId });
      return new McpAppError('notAnApp', `turn item ${itemId} did not return an MCP App (only a tool call that returned a ui:// resource keeps state)`, { threadId, itemId });
    }
    if (app.threadId !== threadId || !store.hasThread(threadId)) return new McpAppError('unknownItem', `thread ${threadId} has no turn item ${itemId}`, { threadId, itemId });
    if (app.state === state) return null; // unchanged: nothing to record (an app that saves on every keystroke adds no events)
    append({ type: 'mcpApp.stateSaved', threadId, itemId, state });
    return null;
  });
  if (refused) throw refused;
  return { bytes, max: MCP_APP_STATE_MAX_BYTES };
}
