/**
 * What the webview saves with `vscode.setState` and how it reads it back. VS Code keeps this
 * state while the webview is hidden and across reloads of its page, so a re-created webview
 * resumes the open thread exactly where it stood: the ThreadState carries the last event seq and
 * each run's last chunk seq, and the controller subscribes from those. The saved value is our own
 * data, but maybe from an older build: anything that does not fit is dropped (the thread is then
 * replayed from seq 0, which is always correct, only slower).
 */
import { createThreadState, isThreadState, type ThreadState } from './thread-state';
import { savedDraft, type SavedDraft } from '../../../src/protocol/host';

/** Version of the saved shape; a state of another version is ignored. */
export const PERSIST_VERSION = 1;
/** Largest thread snapshot (JSON characters) saved; a bigger thread is replayed from seq 0 instead. */
export const MAX_PERSISTED_THREAD_CHARS = 4_000_000;
/**
 * Threads with more messages than this are not saved at all, so a long thread never pays for a
 * JSON.stringify of itself (about 30 ms per 1,000 messages, in one task: a frame gap); a re-created
 * webview replays it from seq 0 instead, in slices (./bulk-replay.ts).
 */
export const MAX_PERSISTED_THREAD_MESSAGES = 1_000;

export interface SavedApproval {
  callId: string;
  threadId: string;
  runId: string;
  toolName: string;
  argumentsJson: string;
  toolClass: 'read' | 'write' | 'execute';
  /** Why it is asked (the engine's sentence) and whether it writes a protected path. */
  reason?: string;
  protectedPath?: boolean;
  /** A safeguard before it failed (the checkpoint: a full disk): the call waits to go on without it. */
  safeguard?: string;
}

export interface PersistedState {
  version: typeof PERSIST_VERSION;
  threadId: string | null;
  draft: string;
  /** JSON of the ThreadState (a string: cheap to clone into VS Code's state store). */
  threadJson: string | null;
  /**
   * Approvals still waiting: the host's session announces each one once, so a webview reloaded
   * while hidden would otherwise never see it again. Stale ones drop out when their tool item
   * completes, on `approvalSettled`, or when answering them fails.
   */
  approvals: SavedApproval[];
  /**
   * JSON of the thread list's rows (a string, encoded only when the list changed), so a re-created
   * webview shows the whole list at once instead of loading it again (../lib/thread-list-loader.ts).
   * Optional: states saved by older builds have none.
   */
  threadListJson?: string | null;
  /**
   * Every thread's composer draft (text, chips, caret) by thread id, '' for a new thread's
   * (./drafts.ts). Optional: states saved by older builds have only `draft`.
   */
  drafts?: Record<string, SavedDraft>;
}

export interface Restored { draft: string; approvals: SavedApproval[]; thread: ThreadState | null; threadListJson: string | null; drafts: Record<string, SavedDraft> }

/** The saved drafts that still fit the shape (one that does not is dropped; the host's copy may have it). */
function decodeDrafts(raw: unknown): Record<string, SavedDraft> {
  const out: Record<string, SavedDraft> = {};
  if (!isRecord(raw)) return out;
  for (const [key, value] of Object.entries(raw)) {
    try {
      out[key] = savedDraft(value);
    } catch {
      // dropped
    }
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const TOOL_CLASSES: readonly unknown[] = ['read', 'write', 'execute'];

function isApproval(v: unknown): v is SavedApproval {
  // An approval saved by a build that did not record its thread is dropped: the engine announces it again.
  return isRecord(v) && typeof v.callId === 'string' && typeof v.threadId === 'string' && typeof v.runId === 'string'
    && typeof v.toolName === 'string' && typeof v.argumentsJson === 'string' && TOOL_CLASSES.includes(v.toolClass);
}

export function encodeState(thread: ThreadState | null, draft: string, approvals: readonly SavedApproval[], threadListJson: string | null = null, drafts: Record<string, SavedDraft> = {}): PersistedState {
  const tooMany = thread !== null && (thread.tree?.messageCount ?? thread.entries.length) > MAX_PERSISTED_THREAD_MESSAGES;
  let threadJson: string | null = thread && !tooMany ? JSON.stringify(thread) : null;
  if (threadJson !== null && threadJson.length > MAX_PERSISTED_THREAD_CHARS) threadJson = null;
  return {
    version: PERSIST_VERSION,
    threadId: thread?.threadId ?? null,
    draft,
    threadJson,
    approvals: approvals.map((a) => ({
      callId: a.callId, threadId: a.threadId, runId: a.runId, toolName: a.toolName, argumentsJson: a.argumentsJson, toolClass: a.toolClass,
      ...(typeof a.reason === 'string' ? { reason: a.reason } : {}), ...(a.protectedPath === true ? { protectedPath: true } : {}),
      ...(typeof a.safeguard === 'string' ? { safeguard: a.safeguard } : {}),
    })),
    ...(threadListJson !== null ? { threadListJson } : {}),
    ...(Object.keys(drafts).length > 0 ? { drafts: { ...drafts } } : {}),
  };
}

/** Reads a saved state; null when there is none (or of another version). */
export function decodeState(raw: unknown, warn: (message: string) => void): Restored | null {
  if (!isRecord(raw) || raw.version !== PERSIST_VERSION) return null;
  const draft = typeof raw.draft === 'string' ? raw.draft : '';
  const approvals = Array.isArray(raw.approvals) ? raw.approvals.filter(isApproval) : [];
  const threadListJson = typeof raw.threadListJson === 'string' ? raw.threadListJson : null;
  const drafts = decodeDrafts(raw.drafts);
  if (typeof raw.threadId !== 'string') return { draft, approvals, thread: null, threadListJson, drafts };
  let thread = createThreadState(raw.threadId);
  if (typeof raw.threadJson === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw.threadJson);
      if (isThreadState(parsed) && parsed.threadId === raw.threadId) thread = parsed;
      else warn('saved thread state has an unexpected shape; replaying the thread from the start');
    } catch {
      warn('saved thread state is not JSON; replaying the thread from the start');
    }
  }
  return { draft, approvals, thread, threadListJson, drafts };
}
