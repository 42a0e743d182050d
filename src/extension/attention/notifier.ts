/**
 * Tells the user when a run ends or a tool call waits for approval while no Vox chat is visible
 * (the side bar shows another view, the chat tab is in the background): a notification with an
 * "Open" button that opens the thread in the side bar, and a badge on the Vox view counting what
 * happened since it was last seen. A client of the protocol like every view: `watchThreads` for
 * run ends, the `approvalRequested` updates every owner session gets. Starts once the engine
 * runs (it never starts the engine itself) and can be turned off with `vox.notifications`.
 */
import * as vscode from 'vscode';
import type { EngineClient } from '../../client/engine-client';
import type { ChatViews } from '../chat-view';
import type { EngineHost } from '../engine-host';
import { approvalAttention, runEndedAttention, type Attention } from './attention-text';

export class AttentionNotifier implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  /** Threads whose runs are variants (reported by the Variants view, not here). */
  private readonly variantThreads = new Set<string>();
  /** Runs already reported (a run ends once, but updates can repeat after a resubscribe). */
  private readonly reported = new Set<string>();
  private unseen = 0;
  /** When this window started watching: a run that ended before it is history (an imported session), not news. */
  private readonly watchingSince = Date.now();
  private client: EngineClient | undefined;

  constructor(private readonly host: EngineHost, private readonly chats: ChatViews, private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(
      host.onDidStart(() => void this.start()),
      chats.onDidChangeVisibility((visible) => {
        if (visible && this.unseen > 0) {
          this.log.info(`notifications: a chat is visible again; clearing the badge (${this.unseen})`);
          this.clearBadge();
        }
      }),
    );
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration('vox').get<boolean>('notifications') !== false;
  }

  private async start(): Promise<void> {
    if (this.client) return;
    try {
      const client = await this.host.client();
      this.client = client;
      client.on('approvalRequested', (u) => void this.onApproval(client, u));
      client.on('threadChanged', (u) => void this.onThreadChanged(client, u.threadId, u.eventType));
      await client.call('watchThreads', {});
    } catch (e) {
      this.log.warn(`notifications: could not watch runs: ${(e as Error).message}`);
    }
  }

  private async onThreadChanged(client: EngineClient, threadId: string, eventType: string): Promise<void> {
    if (eventType === 'run.started') {
      const { runs } = await client.call('listRuns', {}).catch(() => ({ runs: [] as { threadId: string; kind: string }[] }));
      for (const r of runs) if (r.kind === 'variant') this.variantThreads.add(r.threadId);
      return;
    }
    if (eventType !== 'run.ended' || this.chats.isVisible() || !this.enabled()) return;
    const got = await client.call('getThread', { threadId }).catch(() => null);
    const run = got?.runs.filter((r) => r.status !== 'running').sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0))[0];
    if (!got || !run || this.reported.has(run.id)) return;
    if (run.endedAt !== null && run.endedAt < this.watchingSince) return; // imported history keeps its own (past) times
    this.reported.add(run.id);
    const attention = runEndedAttention(got.thread, run, { isVariant: this.variantThreads.has(threadId) });
    if (attention) this.tell(attention);
  }

  private async onApproval(client: EngineClient, req: Parameters<typeof approvalAttention>[1]): Promise<void> {
    if (this.chats.isVisible() || !this.enabled() || this.reported.has(req.callId)) return;
    this.reported.add(req.callId);
    const got = await client.call('getThread', { threadId: req.threadId }).catch(() => null);
    if (got) this.tell(approvalAttention(got.thread, req));
  }

  private tell(a: Attention): void {
    this.unseen++;
    this.log.info(`notifications: ${a.text}`);
    this.chats.setBadge(this.unseen, `${this.unseen} Vox update${this.unseen === 1 ? '' : 's'} since you last looked`);
    const show = a.level === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(a.text, 'Open').then((choice) => {
      if (choice === 'Open') void this.chats.toSidebar({ type: 'hostCommand', command: 'openThread', threadId: a.threadId });
    });
  }

  private clearBadge(): void {
    this.unseen = 0;
    this.chats.setBadge(0, '');
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
