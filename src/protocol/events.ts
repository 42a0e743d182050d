/**
 * The engine's event vocabulary: every change to a thread is one of these, appended to the
 * SQLite event log with a sequence number and projected into tables. Clients receive them as
 * they are (see ./messages.ts), so they are part of the protocol contract.
 */

export type Role = 'user' | 'assistant' | 'system';
export type MessageStatus = 'complete' | 'interrupted' | 'cancelled' | 'failed';
export type RunStatus = 'running' | 'completed' | 'cancelled' | 'failed' | 'interrupted';
export type ItemKind = 'text' | 'reasoning' | 'toolCall';
export type ItemStatus = 'started' | 'completed' | 'denied' | 'failed' | 'interrupted';

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
}

export type VoxEvent =
  | { type: 'thread.created'; threadId: string; title: string }
  | { type: 'thread.renamed'; threadId: string; title: string }
  | { type: 'thread.deleted'; threadId: string }
  | {
      type: 'message.added';
      threadId: string;
      messageId: string;
      parentId: string | null;
      role: Role;
      content: string;
      runId: string | null;
      status: MessageStatus;
    }
  | {
      type: 'run.started';
      threadId: string;
      runId: string;
      ordinal: number;
      provider: string;
      model: string;
      ownerPid: number;
      userMessageId: string;
    }
  | {
      type: 'item.started';
      threadId: string;
      runId: string;
      itemId: string;
      ordinal: number;
      kind: ItemKind;
      toolName: string | null;
      arguments: string | null;
    }
  | {
      type: 'item.completed';
      threadId: string;
      runId: string;
      itemId: string;
      status: Exclude<ItemStatus, 'started'>;
      content: string;
      isError: boolean;
    }
  | {
      type: 'checkpoint.captured';
      threadId: string;
      runId: string | null;
      /** Hidden git ref, e.g. refs/vox/checkpoints/<thread>/<ordinal>. */
      ref: string;
      ordinal: number;
      trigger: 'tool' | 'turnEnd' | 'manual';
      toolName: string | null;
      changedCount: number;
      skippedCount: number;
      /** Set when the capture took longer than its budget (reported, never silently disabled). */
      overBudgetMs: number | null;
      /** The message the thread rewinds to when this checkpoint is restored with mode thread/both. */
      rewindTo: string | null;
    }
  | { type: 'checkpoint.restored'; threadId: string; ordinal: number; mode: 'files' | 'thread' | 'both'; restorePoint: string | null; changedCount: number }
  /** Checkpoint refs deleted by a prune (the git objects go with git's own garbage collection). */
  | { type: 'checkpoint.pruned'; threadId: string; refs: string[] }
  /** The thread's head moves back to `toMessageId` (null: before the first message); later messages stay as a branch. */
  | { type: 'thread.rewound'; threadId: string; toMessageId: string | null }
  | {
      type: 'run.ended';
      threadId: string;
      runId: string;
      status: Exclude<RunStatus, 'running'>;
      error: string | null;
      usage: UsageTotals;
    };

export type VoxEventType = VoxEvent['type'];
export type EventOf<K extends VoxEventType> = Extract<VoxEvent, { type: K }>;

/** An event as stored: with its global sequence number and time (ms since epoch). */
export type StoredEvent = VoxEvent & { seq: number; time: number };
