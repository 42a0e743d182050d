/**
 * The controller's one-command intents: queue, run control, approvals, Plan/Act and permission
 * modes, threads, model and UI preferences. Each checks what it can and sends one protocol
 * command (or two, for a first prompt in Plan mode); answers come back through the Controller
 * (./controller.ts), which extends this class with the incoming side, prompts and subscriptions.
 */
import type { ClientCommand } from '../../../src/protocol/commands/index';
import { MAX_PROMPT_CHARS, MAX_TITLE_CHARS, type UiPreferenceKey } from '../../../src/protocol/commands/index';
import type { HostAction } from '../../../src/protocol/host';
import type { AppModel } from './app-model';
import type { HostBridge } from './host-bridge';
import type { Pending } from './requests';
import { NO_UI_PREFERENCES } from './settings-state';
import { activeRun } from './thread-state';

/** Title of a thread created for a first prompt in Plan mode: the prompt's first line, cut. */
const PLAN_THREAD_TITLE_CHARS = 60;

export abstract class ControllerIntents {
  constructor(readonly model: AppModel, protected readonly bridge: HostBridge) {}

  /** Sends a command, tracking its answer; returns its request id. */
  protected abstract send(command: ClientCommand, extra?: Omit<Pending, 'type'>): string;

  /** Replaces a queued prompt's text (false for an empty or too long one). */
  editQueued(entryId: string, prompt: string): boolean {
    const thread = this.model.thread;
    if (!thread || prompt.trim().length === 0 || prompt.length > MAX_PROMPT_CHARS) return false;
    this.send({ type: 'editQueued', threadId: thread.threadId, entryId, prompt });
    return true;
  }

  /** Moves a queued prompt to `toIndex` (0 = next); the strip reorders when the event comes back. */
  moveQueued(entryId: string, toIndex: number): void {
    const thread = this.model.thread;
    if (!thread || toIndex < 0 || toIndex >= thread.queue.length) return;
    this.send({ type: 'moveQueued', threadId: thread.threadId, entryId, toIndex });
  }

  cancelQueued(entryId: string): void {
    const thread = this.model.thread;
    if (thread) this.send({ type: 'cancelQueued', threadId: thread.threadId, entryId });
  }

  /** promoteToSteer: the running turn takes the queued prompt at its next step. */
  steerQueued(entryId: string): void {
    const thread = this.model.thread;
    if (thread) this.send({ type: 'steerQueued', threadId: thread.threadId, entryId });
  }

  /** Stops the open thread's active run. */
  cancelRun(): boolean {
    const run = this.model.thread ? activeRun(this.model.thread) : null;
    if (!run) return false;
    this.send({ type: 'cancelRun', runId: run.runId });
    return true;
  }

  /** Rate-limit wait controls of a run of the open thread (SPEC 2.4). */
  resumeRun(runId: string): void {
    this.send({ type: 'resumeRun', runId });
  }

  snoozeRun(runId: string, forMs: number): void {
    this.send({ type: 'snoozeRun', runId, forMs });
  }

  setAutoResume(runId: string, autoResume: boolean): void {
    this.send({ type: 'setAutoResume', runId, autoResume });
  }

  respondToApproval(callId: string, decision: 'approved' | 'denied'): void {
    const approval = this.model.approvals.find((a) => a.callId === callId);
    if (!approval || approval.responding) return;
    approval.responding = true;
    this.send({ type: 'respondToApproval', callId, decision }, { callId });
  }

  // ---- permission modes and Plan mode (issue 12, items 3–4) ----

  /** The workspace's permission mode and rules. */
  loadPermissions(): void {
    this.send({ type: 'getPermissions' });
  }

  /** Plan / Act of the open thread, or of the next new thread. */
  setWorkMode(mode: 'plan' | 'act'): void {
    const thread = this.model.thread;
    if (!thread) this.model.nextWorkMode = mode;
    else if ((thread.workMode ?? 'act') !== mode) this.send({ type: 'setWorkMode', threadId: thread.threadId, mode });
  }

  /** The open thread's own permission mode (null: follow the workspace), or the workspace default without a thread. */
  setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto' | null, scope: 'thread' | 'workspace' = this.model.thread ? 'thread' : 'workspace'): void {
    const thread = this.model.thread;
    if (scope === 'thread' && thread) this.send({ type: 'setPermissionMode', scope, threadId: thread.threadId, mode });
    else if (mode !== null) this.send({ type: 'setPermissionMode', scope: 'workspace', mode }, { scopeWorkspace: true });
  }

  /** The user's edit of the plan: its title and steps now (false when nothing valid is left). */
  updatePlan(planId: string, title: string, steps: Array<{ id?: string; text: string }>): boolean {
    const thread = this.model.thread;
    const kept = steps.map((x) => ({ ...x, text: x.text.trim() })).filter((x) => x.text.length > 0);
    if (!thread || title.trim().length === 0 || kept.length === 0) return false;
    this.send({ type: 'updatePlan', threadId: thread.threadId, planId, title: title.trim(), steps: kept.map((x) => (x.id ? { id: x.id, text: x.text } : { text: x.text })) });
    return true;
  }

  setPlanStep(planId: string, stepId: string, status: 'pending' | 'inProgress' | 'done' | 'skipped'): void {
    const thread = this.model.thread;
    if (thread) this.send({ type: 'setPlanStep', threadId: thread.threadId, planId, stepId, status });
  }

  /** "Act on this plan": the thread goes to Act and a prompt carrying the plan is sent. */
  actOnPlan(planId: string): void {
    const thread = this.model.thread;
    if (thread) this.send({ type: 'actOnPlan', threadId: thread.threadId, planId });
  }

  /** A new thread for a first prompt in Plan mode: created and switched before the prompt goes (the session answers in order). */
  protected createPlanThread(prompt: string): string {
    const threadId = `thread:${globalThis.crypto.randomUUID()}`;
    const title = (prompt.trim().split('\n')[0] ?? '').slice(0, PLAN_THREAD_TITLE_CHARS) || 'Plan';
    this.send({ type: 'createThread', threadId, title });
    this.send({ type: 'setWorkMode', threadId, mode: 'plan' });
    this.model.nextWorkMode = 'act';
    return threadId;
  }

  renameThread(threadId: string, title: string): boolean {
    const t = title.trim();
    if (t.length === 0 || t.length > MAX_TITLE_CHARS) return false;
    this.send({ type: 'renameThread', threadId, title: t });
    const row = this.model.threads.find((r) => r.id === threadId);
    if (row) row.title = t;
    return true;
  }

  deleteThread(threadId: string): void {
    this.send({ type: 'deleteThread', threadId });
    this.model.threads = this.model.threads.filter((r) => r.id !== threadId);
  }

  setModel(ref: string): void {
    if (ref.length === 0 || ref === this.model.settings?.model) return;
    this.send({ type: 'setModel', model: ref });
  }

  hostAction(action: HostAction): void {
    this.bridge.sendHostAction(action);
  }

  /** Keeps a UI choice across reloads (in the host, through the engine); shown at once. */
  setUiPreference(key: UiPreferenceKey, value: boolean): void {
    const s = this.model.settings;
    if (s) s.ui = { ...(s.ui ?? NO_UI_PREFERENCES), [key]: value };
    this.send({ type: 'setUiPreference', key, value });
  }
}
