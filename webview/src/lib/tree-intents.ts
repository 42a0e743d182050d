/**
 * The conversation-tree intents of the webview: regenerate an answer
 * (same posture, or another model), retry a failed or cut-off run, edit a user message (a new
 * branch) or an assistant message (in place), switch branch, and open the side-by-side compare
 * tab. Each checks what it can here and sends one protocol command (src/protocol/commands/
 * branches.ts); the new branch, the moved head and the edit come back as the thread's events
 * (./tree-state.ts), and a refusal (the thread is busy, an unknown message) as an error notice.
 */
import { MAX_PROMPT_CHARS, type ClientCommand } from '../../../src/protocol/commands/index';
import type { HostAction } from '../../../src/protocol/host';
import type { AppModel } from './app-model';
import type { RunView } from './run-views';
import { activeRun } from './thread-model';
import { branchBelowHead, siblingsIn, type Siblings } from './tree-state';
import { splitContext } from '../../../src/protocol/mentions';

export interface TreeIntentDeps {
  model: AppModel;
  send(command: ClientCommand): string;
  hostAction(action: HostAction, args?: { threadId?: string }): void;
}

/** Run statuses that offer Retry (a completed run offers Regenerate, and Retry too when it stopped at the output limit). */
const RETRY_STATUSES: readonly RunView['status'][] = ['failed', 'cancelled', 'interrupted'];

export class TreeIntents {
  constructor(private readonly deps: TreeIntentDeps) {}

  /** True while nothing runs in the open thread and no prompt is on its way (the engine refuses reruns then anyway). */
  get idle(): boolean {
    const thread = this.deps.model.thread;
    return !!thread && !activeRun(thread) && !this.deps.model.sending;
  }

  /** Whether a run offers Retry: it failed, was stopped or interrupted, or its reply was cut at the output limit. */
  static canRetry(run: RunView): boolean {
    return RETRY_STATUSES.includes(run.status) || (run.status === 'completed' && run.stopReason === 'length');
  }

  /** Regenerate the answer of `runId` as a sibling branch: its posture, or `model` instead of its model. */
  regenerate(runId: string, model?: string): boolean {
    const thread = this.deps.model.thread;
    if (!thread || !thread.runs[runId] || !this.idle) return false;
    this.deps.send({ type: 'regenerate', threadId: thread.threadId, runId, ...(model ? { model } : {}) });
    return true;
  }

  /** Retry a run that failed, was cancelled or interrupted, or stopped at the output limit. */
  retry(runId: string, model?: string): boolean {
    const thread = this.deps.model.thread;
    const run = thread?.runs[runId];
    if (!thread || !run || !TreeIntents.canRetry(run) || !this.idle) return false;
    this.deps.send({ type: 'retry', threadId: thread.threadId, runId, ...(model ? { model } : {}) });
    return true;
  }

  /**
   * Edit a message: a user message's new text starts a new branch from its parent (run at once);
   * an assistant message changes in place. False for an empty, unchanged or too long text.
   */
  edit(messageId: string, content: string): boolean {
    const thread = this.deps.model.thread;
    const m = thread?.tree.messages[messageId];
    if (!thread || !m || content.trim().length === 0 || content.length > MAX_PROMPT_CHARS || content === m.content) return false;
    if (m.role === 'user' && !this.idle) return false; // a new run: not while one runs
    this.deps.send({ type: 'editMessage', threadId: thread.threadId, messageId, content });
    return true;
  }

  /** A user message's text as typed: its attached context (@-mentions, src/protocol/mentions.ts) is not edited. */
  promptOf(messageId: string): string {
    const m = this.deps.model.thread?.tree.messages[messageId];
    return m ? splitContext(m.content).prompt : '';
  }

  /** Edit a user message's prompt (its attached context kept as it was): a new branch from its parent. */
  editPrompt(messageId: string, prompt: string): boolean {
    const m = this.deps.model.thread?.tree.messages[messageId];
    if (!m || m.role !== 'user' || prompt.trim().length === 0) return false;
    return this.edit(messageId, prompt + m.content.slice(splitContext(m.content).prompt.length));
  }

  /** The ‹ 2/3 › of a message: its place among its siblings. */
  siblings(messageId: string): Siblings {
    const thread = this.deps.model.thread;
    return thread ? siblingsIn(thread.tree, messageId) : { index: 0, count: 1, ids: [messageId] };
  }

  /** Opens the branch of `messageId` (the engine moves the head to the newest tip under it). */
  switchTo(messageId: string): boolean {
    const thread = this.deps.model.thread;
    if (!thread || !thread.tree.messages[messageId] || !this.idle) return false;
    this.deps.send({ type: 'switchBranch', threadId: thread.threadId, toMessageId: messageId });
    return true;
  }

  /** The neighbouring sibling's branch (‹ = -1, › = +1); false at either end. */
  step(messageId: string, delta: -1 | 1): boolean {
    const s = this.siblings(messageId);
    const to = s.ids[s.index + delta];
    return to !== undefined && this.switchTo(to);
  }

  /** After a checkpoint restore moved the head back: opens the branch it left (the later messages). */
  openRewound(): boolean {
    const thread = this.deps.model.thread;
    const to = thread ? branchBelowHead(thread.tree) : null;
    return to !== null && this.switchTo(to);
  }

  /** Opens the compare tab of the open thread's branches (the extension picks up to four). */
  compare(): boolean {
    const thread = this.deps.model.thread;
    if (!thread || thread.tree.leafCount < 2) return false;
    this.deps.hostAction('compareBranches', { threadId: thread.threadId });
    return true;
  }
}
