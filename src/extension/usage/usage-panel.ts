/**
 * "Vox: Usage" (SPEC 3.4): one editor tab with the cost ledger — the daily spend chart, spend per
 * model (with the provider's own figure beside the card's), per thread and per variant group, the
 * caps and the transactions. A client of the protocol like every view: `getUsage` for the data
 * (re-read when the page asks, when its period changes, and when a run ends in any thread while
 * the tab is open), `grantBalance` and `setBudget` behind its two buttons (the amounts asked in an
 * input box). The page is a WebviewPanel with a strict CSP running dist/usage.js
 * (webview/src/usage/), which checks what it is posted before it renders it.
 */
import * as vscode from 'vscode';
import { tabPageHtml } from '../tab-page';
import type { EngineHost } from '../engine-host';
import type { ChatViews } from '../chat-view';
import type { ExtensionContribution } from '../contribution';
import { localDay, usdToMicroOrNull } from '../../protocol/ledger';
import { dollarsProblem, parseDollars } from './usage-input';

export const USAGE_COMMAND = 'vox.showUsage';
export const USAGE_PANEL_TYPE = 'vox.usage';
/** The period the tab opens with (days, today included). */
const DEFAULT_DAYS = 30;
/** Periods the page may ask for (the same as webview/src/usage/data.ts offers). */
const ALLOWED_DAYS = new Set([7, 30, 90]);

function usageHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return tabPageHtml(webview, extensionUri, 'usage', 'Vox: Usage');
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

class UsagePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  private days = DEFAULT_DAYS;
  private offWatch: (() => void) | null = null;

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly host: EngineHost, private readonly chats: ChatViews, private readonly log: vscode.LogOutputChannel) {}

  show(): void {
    if (this.panel) return void this.panel.reveal();
    const panel = vscode.window.createWebviewPanel(USAGE_PANEL_TYPE, 'Vox: Usage', vscode.ViewColumn.Active, {
      enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extensionUri, 'dist')],
    });
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.ctx.extensionUri, 'media', 'vox.svg');
    panel.webview.onDidReceiveMessage((m: unknown) => void this.onMessage(m));
    panel.onDidDispose(() => {
      this.panel = null;
      this.offWatch?.();
      this.offWatch = null;
    });
    panel.webview.html = usageHtml(panel.webview, this.ctx.extensionUri);
    void this.watch();
  }

  /** Re-reads the report whenever a run ends in any thread (the CLI's too) while the tab is open. */
  private async watch(): Promise<void> {
    try {
      const client = await this.host.client();
      if (!this.panel) return;
      this.offWatch = client.on('threadChanged', (u) => {
        if (u.eventType === 'run.ended') void this.post();
      });
      await client.call('watchThreads', {});
    } catch (e) {
      this.log.warn(`the Usage tab is not refreshed when runs end: ${describe(e)}`);
    }
  }

  private async post(): Promise<void> {
    const panel = this.panel;
    if (!panel) return;
    try {
      const now = Date.now();
      const today = localDay(now);
      const since = localDay(now - (this.days - 1) * 86_400_000);
      const report = await (await this.host.client()).call('getUsage', { since });
      await panel.webview.postMessage({ type: 'usage', today, days: this.days, report });
    } catch (e) {
      this.log.warn(`the usage report could not be read: ${describe(e)}`);
      void vscode.window.showErrorMessage(`Vox: the usage report could not be read: ${describe(e)}`);
    }
  }

  private async onMessage(m: unknown): Promise<void> {
    const msg = (m && typeof m === 'object' ? m : {}) as { type?: unknown; days?: unknown; threadId?: unknown };
    if (msg.type === 'ready') return this.post();
    if (msg.type === 'refresh') {
      if (typeof msg.days === 'number' && ALLOWED_DAYS.has(msg.days)) this.days = msg.days;
      return this.post();
    }
    if (msg.type === 'openThread' && typeof msg.threadId === 'string') {
      return void this.chats.toSidebar({ type: 'hostCommand', command: 'openThread', threadId: msg.threadId });
    }
    if (msg.type === 'grant') return this.grant();
    if (msg.type === 'setDailyCap') return this.setDailyCap();
    this.log.warn(`usage tab: unexpected message ${JSON.stringify(m).slice(0, 200)}`);
  }

  private async grant(): Promise<void> {
    const text = await vscode.window.showInputBox({
      title: 'Vox: add to the balance', prompt: 'Dollars to add (e.g. 5 or 2.50). From then on a call the balance cannot cover is refused before it is sent.',
      validateInput: (v) => dollarsProblem(v, false),
    });
    if (text === undefined) return;
    const usd = parseDollars(text);
    if (usd instanceof Error) return;
    const micro = usdToMicroOrNull(usd);
    if (micro === null || micro <= 0) return;
    try {
      await (await this.host.client()).call('grantBalance', { kind: 'purchase', amountMicroUsd: micro, note: 'added in the Usage tab' });
    } catch (e) {
      void vscode.window.showErrorMessage(`Vox: the balance was not changed: ${describe(e)}`);
    }
    await this.post();
  }

  private async setDailyCap(): Promise<void> {
    const text = await vscode.window.showInputBox({
      title: 'Vox: daily cap', prompt: 'Dollars a day (e.g. 2). Empty removes the cap. A call that would pass it is refused before it is sent.',
      validateInput: (v) => dollarsProblem(v, true),
    });
    if (text === undefined) return;
    const usd = text.trim() === '' ? null : parseDollars(text);
    if (usd instanceof Error) return;
    const micro = usd === null ? null : usdToMicroOrNull(usd);
    try {
      await (await this.host.client()).call('setBudget', { scope: 'daily', capMicroUsd: micro, action: 'block' });
    } catch (e) {
      void vscode.window.showErrorMessage(`Vox: the cap was not changed: ${describe(e)}`);
    }
    await this.post();
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

/** `vox.showUsage` (the palette, and a click on the spend in the status bar) and its tab. */
export const usagePanel: ExtensionContribution = {
  name: 'usage tab',
  commands: [USAGE_COMMAND],
  activate({ ctx, host, chats, log }, scope) {
    const panel = scope.add(new UsagePanel(ctx, host, chats, log));
    scope.command(USAGE_COMMAND, () => panel.show(), { log });
  },
};

