/**
 * Edits waiting for approval, reviewed in VS Code's diff editor. When a
 * write_file / apply_edit call waits, the engine computes its preview (`previewToolCall`: the
 * tool's own logic, nothing written) and, per `vox.review.openDiff` ("open", the default;
 * "offer": a notification with "Show Diff", Accept, Reject; "off"), a `vscode.diff` opens: the
 * file now ↔ what the tool will write. Accept / Reject are editor-title actions on that diff (and
 * the notification's buttons in "offer" mode) and palette commands; "Accept All Edits This Turn" approves this call and every
 * later edit of the same run. The chat card's own buttons still work: whoever answers first
 * wins, and the diff tab closes when the call is settled, however that happened.
 */
import * as vscode from 'vscode';
import type { EngineClient } from '../../client/engine-client';
import type { UpdateOf } from '../../protocol/updates';
import type { EngineHost } from '../engine-host';
import type { ContributionScope } from '../contribution';
import { callOf, REVIEW_SCHEME, reviewUri, textOf, type ReviewDocuments } from './review-documents';
import { variantWorktreeLabel } from '../variant-tabs';

/** Tools whose waiting calls get a diff. */
const EDIT_TOOLS = new Set(['write_file', 'apply_edit']);
/** The context key true while the active editor shows a waiting edit (editor-title Accept / Reject). */
export const PENDING_EDIT_CONTEXT = 'vox.review.pendingEdit';

export type OpenDiffMode = 'open' | 'offer' | 'off';

/** `where`: "variant #n's worktree" when the call is a variant's (its path is in that worktree), else null. */
interface Waiting { callId: string; threadId: string; runId: string; path: string; toolName: string; before: vscode.Uri; after: vscode.Uri; where: string | null }

export class EditReview implements vscode.Disposable {
  private readonly waiting = new Map<string, Waiting>();
  /** Runs whose edits the user accepted for the rest of the turn. */
  private readonly acceptAllRuns = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private detach: Array<() => void> = [];

  constructor(private readonly host: EngineHost, private readonly docs: ReviewDocuments, private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(
      host.onDidStart(() => void this.attach()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
      vscode.window.tabGroups.onDidChangeTabs(() => this.updateContext()),
    );
  }

  /** Calls waiting now, oldest first (for tests and pickers). */
  get pending(): readonly Waiting[] {
    return [...this.waiting.values()];
  }

  private mode(): OpenDiffMode {
    const m = vscode.workspace.getConfiguration('vox').get<string>('review.openDiff');
    return m === 'offer' || m === 'off' ? m : 'open';
  }

  async attach(): Promise<void> {
    const client = await this.host.client();
    for (const d of this.detach) d();
    this.detach = [
      client.on('approvalRequested', (u) => void this.onRequested(client, u).catch((e: Error) => this.log.warn(`edit preview for ${u.callId}: ${e.message}`))),
      client.on('approvalSettled', (u) => void this.onSettled(u)),
    ];
    // Calls that were already waiting when the engine started (a resumed run).
    for (const a of (await client.call('listApprovals', {})).approvals) void this.onRequested(client, { type: 'approvalRequested', ...a }).catch(() => undefined);
  }

  private async onRequested(client: EngineClient, u: UpdateOf<'approvalRequested'>): Promise<void> {
    if (!EDIT_TOOLS.has(u.toolName) || this.waiting.has(u.callId)) return;
    if (this.acceptAllRuns.has(u.runId)) {
      await client.call('respondToApproval', { callId: u.callId, decision: 'approved' });
      return;
    }
    const mode = this.mode();
    if (mode === 'off') return;
    const p = await client.call('previewToolCall', { callId: u.callId });
    const before = p.beforeBase64 === null ? null : Buffer.from(p.beforeBase64, 'base64');
    this.docs.set(u.callId, textOf(before), textOf(Buffer.from(p.afterBase64, 'base64')));
    const w: Waiting = {
      callId: u.callId, threadId: u.threadId, runId: u.runId, path: p.path, toolName: u.toolName,
      before: reviewUri(p.path, u.callId, 'before'), after: reviewUri(p.path, u.callId, 'after'),
      where: variantWorktreeLabel((await client.call('listVariants', {})).pools, u.threadId),
    };
    this.waiting.set(u.callId, w);
    // "open": the diff's title bar has Accept / Reject / Accept All; "offer": a notification asks first.
    if (mode === 'open') await this.showDiff(w);
    else void this.notify(w, true);
  }

  private async showDiff(w: Waiting): Promise<void> {
    const what = w.toolName === 'write_file' ? 'write_file' : 'apply_edit';
    // The focus stays where it was (the composer, for someone typing): Alt+Enter there approves, in the diff too.
    await vscode.commands.executeCommand('vscode.diff', w.before, w.after, `${w.path} (Vox ${what}${w.where ? ` in ${w.where}` : ''} — waiting for approval)`, { preview: false, preserveFocus: true });
  }

  private async notify(w: Waiting, offer: boolean): Promise<void> {
    const actions = [...(offer ? ['Show Diff'] : []), 'Accept', 'Reject', 'Accept All Edits This Turn'];
    const pick = await vscode.window.showInformationMessage(`Vox wants to ${w.toolName === 'write_file' ? 'write' : 'edit'} ${w.path}${w.where ? ` in ${w.where}` : ''}.`, ...actions);
    if (!pick || !this.waiting.has(w.callId)) return;
    if (pick === 'Show Diff') {
      await this.showDiff(w);
      return;
    }
    await this.answer(w.callId, pick === 'Reject' ? 'denied' : 'approved', pick === 'Accept All Edits This Turn');
  }

  /** Answers a waiting edit (`callId`, or the one in the active diff, or the only one waiting). */
  async answer(callId: string | undefined, decision: 'approved' | 'denied', allThisTurn = false): Promise<void> {
    const id = callId ?? this.activeCall() ?? (this.waiting.size === 1 ? [...this.waiting.keys()][0] : undefined);
    const w = id ? this.waiting.get(id) : undefined;
    if (!w) {
      void vscode.window.showInformationMessage('Vox: no edit is waiting for approval here.');
      return;
    }
    const client = await this.host.client();
    if (allThisTurn) this.acceptAllRuns.add(w.runId);
    await client.call('respondToApproval', { callId: w.callId, decision });
    if (allThisTurn) {
      // Everything else of this run that is already waiting goes too.
      for (const other of [...this.waiting.values()]) if (other.runId === w.runId && other.callId !== w.callId) await client.call('respondToApproval', { callId: other.callId, decision: 'approved' }).catch(() => undefined);
    }
  }

  private activeCall(): string | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const input = tab?.input;
    if (input instanceof vscode.TabInputTextDiff) return callOf(input.modified) ?? callOf(input.original);
    return callOf(vscode.window.activeTextEditor?.document.uri);
  }

  private async onSettled(u: UpdateOf<'approvalSettled'>): Promise<void> {
    const w = this.waiting.get(u.callId);
    if (!w) return;
    this.waiting.delete(u.callId);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && callOf(t.input.modified) === u.callId);
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
    this.docs.drop(u.callId);
    this.updateContext();
  }

  private updateContext(): void {
    const id = this.activeCall();
    void vscode.commands.executeCommand('setContext', PENDING_EDIT_CONTEXT, id !== undefined && this.waiting.has(id));
  }

  dispose(): void {
    for (const d of this.detach) d();
    for (const d of this.disposables) d.dispose();
  }
}

export function registerEditReviewCommands(review: EditReview, log: vscode.LogOutputChannel, scope: ContributionScope): void {
  const callArg = (a: unknown): string | undefined => (typeof a === 'string' ? a : a instanceof vscode.Uri ? callOf(a) : undefined);
  scope.command('vox.review.acceptEdit', (a) => review.answer(callArg(a), 'approved'), { log });
  scope.command('vox.review.rejectEdit', (a) => review.answer(callArg(a), 'denied'), { log });
  scope.command('vox.review.acceptAllEdits', (a) => review.answer(callArg(a), 'approved', true), { log });
}

export { REVIEW_SCHEME };
