/**
 * The Vox chat webview, in the activity-bar view and in editor tabs. Each webview instance gets
 * its own ClientSession (engine ⇄ protocol); the webview itself holds no truth, it resubscribes
 * from its last seq after being hidden or reloaded. HTML uses a strict CSP with a nonce and
 * loads dist/webview.js / dist/webview.css through asWebviewUri (works with remote hosts).
 */
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { hostActionMessage, type HostAction } from '../protocol/host';
import type { EngineUpdate } from '../protocol/updates';
import type { EngineHost } from './engine-host';
import { CodeActions } from './code-actions/code-actions';
import { DraftStore } from './drafts';
import { WaitableValue } from './waitable-value';

export const CHAT_VIEW_ID = 'vox.chatView';
export const CHAT_PANEL_TYPE = 'vox.chatPanel';
/**
 * Longest wait (ms) for VS Code to resolve the side bar chat after a command focused it; when the
 * view has not come by then, the command's message to it is dropped.
 */
const SIDEBAR_RESOLVE_TIMEOUT_MS = 5_000;

/** The VS Code command (and its arguments) behind each webview button (the actions are declared in src/protocol/host.ts). */
const HOST_ACTIONS: Record<HostAction, [string, ...unknown[]]> = {
  setApiKey: ['vox.setApiKey'],
  chooseGguf: ['vox.chooseGguf'],
  useOllama: ['vox.useOllama'],
  downloadModel: ['vox.downloadModel'],
  useVsCodeLm: ['vox.connectModel', 'vscode-lm'],
  connectModel: ['vox.connectModel'],
  reviewChanges: ['vox.review.changes'],
  compareBranches: ['vox.compareBranches'],
};

export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = crypto.randomBytes(18).toString('base64url');
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.css'));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    // Inline styles only by nonce: an MCP App's srcdoc frame inherits this policy, and its <style> tags get the nonce (webview/src/lib/mcp-app.ts).
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    // The bundle by nonce; its lazily imported chunks (code highlighting: dist/webview-chunks/) from the
    // webview's own resource origin. No 'unsafe-eval', no inline script.
    `script-src 'nonce-${nonce}' ${webview.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Vox</title>
</head>
<body>
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}

type Session = Awaited<ReturnType<EngineHost['connect']>>;

/** Connects one webview to the engine (its own protocol session) for as long as the webview lives. */
class ChatConnection implements vscode.Disposable {
  private session: Session | undefined;
  private queue: unknown[] = [];
  private readonly disposable: vscode.Disposable;
  private disposed = false;

  constructor(private readonly webview: vscode.Webview, private readonly host: EngineHost, private readonly log: vscode.LogOutputChannel, private readonly codeActions: CodeActions,
    private readonly drafts: DraftStore) {
    this.disposable = webview.onDidReceiveMessage((msg: unknown) => this.receive(msg));
    void this.connect();
  }

  post(u: EngineUpdate): void {
    void this.webview.postMessage(u);
  }

  private async connect(): Promise<void> {
    try {
      const session = await this.host.connect((u) => this.post(u));
      if (this.disposed) return session.dispose();
      this.session = session;
      // Unsolicited settings tell the webview that a (new) session is there: it resubscribes.
      this.post({ type: 'settings', ...session.settings() });
      const pending = this.queue;
      this.queue = [];
      for (const m of pending) session.handle(m);
    } catch (e) {
      this.log.error(`Vox engine failed to start: ${(e as Error).message}`);
      const err = e as { domain?: string; code?: string };
      this.post({ type: 'error', domain: err.domain ?? 'internal', code: err.code ?? 'engineStart', message: `Vox could not start: ${(e as Error).message}` });
    }
  }

  private receive(msg: unknown): void {
    const type = msg && typeof msg === 'object' ? (msg as { type?: unknown }).type : undefined;
    // The composer's drafts: kept by the extension host (./drafts.ts), not engine commands.
    if (type === 'draftSave') {
      this.drafts.save(msg);
      return;
    }
    if (type === 'draftsRequest') {
      void this.webview.postMessage({ type: 'drafts', drafts: this.drafts.all() });
      return;
    }
    if (msg && typeof msg === 'object' && (msg as { type?: unknown }).type === 'codeAction') {
      void this.codeActions.handle(msg); // a code block's Insert at Cursor / Apply to File (./code-actions/)
      return;
    }
    if (msg && typeof msg === 'object' && (msg as { type?: unknown }).type === 'hostAction') {
      try {
        const m = hostActionMessage(msg);
        // A thread-scoped action (Compare branches) gets the thread as its argument.
        void vscode.commands.executeCommand(...HOST_ACTIONS[m.action], ...(m.threadId ? [m.threadId] : []));
      } catch (e) {
        this.log.warn(`unknown host action from webview: ${(e as Error).message}`);
      }
      return;
    }
    if (this.session) this.session.handle(msg);
    else this.queue.push(msg);
  }

  dispose(): void {
    this.disposed = true;
    this.session?.dispose();
    this.disposable.dispose();
  }
}

/** Tracks every open chat (sidebar + editor tabs) so palette commands can reach them. */
export class ChatViews implements vscode.WebviewViewProvider, vscode.Disposable {
  private readonly connections = new Set<ChatConnection>();
  private sidebar: vscode.WebviewView | undefined;
  /** The side bar chat's connection, once VS Code has resolved the view (cleared when it is disposed). */
  private readonly sidebarConnection = new WaitableValue<ChatConnection>();
  private readonly panels = new Map<vscode.WebviewPanel, ChatConnection>();
  private readonly visibility = new vscode.EventEmitter<boolean>();
  /** Fires with `isVisible()` when a chat (side bar or tab) is shown or hidden. */
  readonly onDidChangeVisibility = this.visibility.event;
  private badge: vscode.ViewBadge | undefined;

  private readonly codeActions: CodeActions;
  /** Every chat's drafts, in the workspace state (./drafts.ts). */
  private readonly drafts: DraftStore;

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly host: EngineHost, private readonly log: vscode.LogOutputChannel) {
    this.codeActions = new CodeActions(log);
    this.drafts = new DraftStore(ctx.workspaceState, (m) => log.warn(m));
  }

  private options(): vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extensionUri, 'dist'), vscode.Uri.joinPath(this.ctx.extensionUri, 'media')] };
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    view.webview.options = this.options();
    view.webview.html = chatHtml(view.webview, this.ctx.extensionUri);
    const conn = new ChatConnection(view.webview, this.host, this.log, this.codeActions, this.drafts);
    this.connections.add(conn);
    this.sidebar = view;
    this.sidebarConnection.set(conn);
    view.badge = this.badge;
    view.onDidChangeVisibility(() => this.visibility.fire(this.isVisible()));
    // A view (re)created by being shown: it is seen now (listeners clear what they counted).
    if (view.visible) setTimeout(() => this.visibility.fire(this.isVisible()), 0);
    view.onDidDispose(() => {
      conn.dispose();
      this.connections.delete(conn);
      if (this.sidebarConnection.value === conn) {
        this.sidebar = undefined;
        this.sidebarConnection.set(undefined);
      }
    });
  }

  openInEditor(): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(CHAT_PANEL_TYPE, 'Vox', vscode.ViewColumn.Beside, this.options());
    panel.iconPath = vscode.Uri.joinPath(this.ctx.extensionUri, 'media', 'vox.svg');
    panel.webview.html = chatHtml(panel.webview, this.ctx.extensionUri);
    const conn = new ChatConnection(panel.webview, this.host, this.log, this.codeActions, this.drafts);
    this.connections.add(conn);
    this.panels.set(panel, conn);
    panel.onDidChangeViewState(() => this.visibility.fire(this.isVisible()));
    panel.onDidDispose(() => {
      conn.dispose();
      this.connections.delete(conn);
      this.panels.delete(panel);
    });
    return panel;
  }

  /** Sends a host command to the sidebar chat (opening it first). */
  async toSidebar(u: EngineUpdate): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    (await this.sidebarConnection.wait(SIDEBAR_RESOLVE_TIMEOUT_MS))?.post(u);
  }

  /**
   * Sends a host command to the chat in front: the active chat tab, else the side bar chat if it
   * is resolved (a keybinding scoped to the chat's focus; nothing is opened).
   */
  toFocused(u: EngineUpdate): void {
    const panel = [...this.panels].find(([p]) => p.active);
    (panel?.[1] ?? this.sidebarConnection.value)?.post(u);
  }

  /** True while the user can see a Vox chat (the side bar view, or a chat tab in front). */
  isVisible(): boolean {
    return !!this.sidebar?.visible || [...this.panels.keys()].some((p) => p.visible);
  }

  /**
   * The badge on the Vox view (0 clears it); kept for a view resolved later. Cleared with value 0,
   * not `undefined`: VS Code 1.100's webview view pane ignores an undefined badge (the old one
   * stays), while a 0 badge replaces it and shows nothing.
   */
  setBadge(value: number, tooltip: string): void {
    this.badge = value > 0 ? { value, tooltip } : { value: 0, tooltip: '' };
    if (this.sidebar) this.sidebar.badge = this.badge;
  }

  get openCount(): number {
    return this.connections.size;
  }

  dispose(): void {
    for (const c of this.connections) c.dispose();
    this.connections.clear();
    this.codeActions.dispose();
    this.visibility.dispose();
  }
}
