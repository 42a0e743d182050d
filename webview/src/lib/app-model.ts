/**
 * The webview's model: everything the app renders, as one plain object the Controller
 * (./controller.ts) and its features mutate (a Svelte `$state` proxy in the app, a plain object
 * in tests).
 */
import type { RevealRequest } from './thread-search';
import type { EngineUpdate } from '../../../src/protocol/updates';
import type { SettingsView, ThreadSummary } from '../../../src/protocol/commands/index';
import type { ChildThreadView } from '../../../src/protocol/commands/threads';
import type { ThreadState } from './thread-model';
import type { PermissionsView } from '../../../src/protocol/commands/permissions';
import { createContextModel, type ContextModel } from './context-state';
import type { McpModel } from './mcp-state';
import type { SavedDraft } from '../../../src/protocol/host';
import type { RestoreFlow } from './restore-state';
import type { ThreadCosts } from './turn-cost-state';

export type { SettingsView, ThreadSummary };

/** Error notices kept on screen; older ones are dropped. */
export const MAX_NOTICES = 5;

export type ApprovalView = Omit<Extract<EngineUpdate, { type: 'approvalRequested' }>, 'type'> & { responding: boolean };
export interface Notice { id: number; code: string; message: string }

export interface AppModel {
  settings: SettingsView | null;
  threads: ThreadSummary[];
  threadsLoaded: boolean;
  /** Where the next page of the thread list starts (null: everything is loaded). */
  threadsCursor: string | null;
  /** The open thread; null while composing the first prompt of a new one. */
  thread: ThreadState | null;
  /** Tool calls waiting for the user, of every thread (each shows in its own thread; see `approvalsOf`). */
  approvals: ApprovalView[];
  /** The waiting approval the sticky bar shows, after Next (null: the oldest; ./approval-bar.ts). */
  approvalFocus?: string | null;
  notices: Notice[];
  draft: string;
  /** Every thread's composer draft by thread id ('' a new thread's), the open one's included (./drafts.ts). */
  drafts?: Record<string, SavedDraft>;
  /** Where the composer puts the caret; `request` bumps each time it should (a draft restored). */
  draftCaret?: { start: number; end: number; request: number } | null;
  /** A prompt sent but not yet seen back as a user message. */
  sending: { requestId: string; prompt: string } | null;
  /** Bumped when the composer should take focus. */
  focusRequests: number;
  /** Subagent threads of the thread-list rows expanded so far (SPEC 2.4). */
  childThreads: Record<string, ChildThreadView[] | undefined>;
  /** The workspace's permission mode and rules (`getPermissions`); a thread's own mode is in its state. */
  permissions?: PermissionsView | null;
  /** Plan / Act for the first prompt of a new thread (an open thread carries its own). */
  nextWorkMode?: 'plan' | 'act';
  /** The permission mode of the next new thread, sent with its first prompt (null or absent: the workspace default). */
  nextPermissionMode?: 'ask' | 'autoEdits' | 'fullAuto' | null;
  /** The composer's @-mentions, chips and context meter (./context-state.ts). */
  context: ContextModel;
  /** A `compactThread` on its way (./features/compaction.ts). */
  compacting?: { requestId: string; threadId: string } | null;
  /** The composer's MCP prompts and resources (./mcp-state.ts; created by the controller). */
  mcp?: McpModel;
  /** A message to scroll to and highlight in the open thread (a search result: ./thread-search.ts). */
  reveal?: RevealRequest | null;
  /** The chat's "Restore to here": its preview, confirm and Undo bar (./features/checkpoints.ts). */
  restore?: RestoreFlow | null;
  /** What the open thread's turns cost (`getThreadCosts`; ./features/costs.ts), null until read; not saved. */
  costs?: ThreadCosts | null;
}

export interface Logger { warn(message: string): void; error(message: string): void }

export function createModel(): AppModel {
  return { settings: null, threads: [], threadsLoaded: false, threadsCursor: null, thread: null, approvals: [], notices: [], draft: '', sending: null, focusRequests: 0, childThreads: {}, context: createContextModel() };
}

/** The approvals of one thread (null: those of no open thread, for the empty screen). */
export function approvalsOf(model: AppModel, threadId: string | null): ApprovalView[] {
  return model.approvals.filter((a) => a.threadId === threadId);
}

/** Warnings and errors to the webview's console (the developer tools of the webview). */
export const consoleLogger: Logger = {
  warn: (m) => console.warn(`[vox] ${m}`),
  error: (m) => console.error(`[vox] ${m}`),
};
