/**
 * "Vox: Compare Branches" (SPEC 5.4): an editor tab showing 2..4 branches of a
 * thread side by side — the shared messages collapsed, then each branch's messages after the
 * divergence point in its own column, and the diff of the final answers. A client of the
 * protocol like every view: `getThreadTree` to find the branches, `compareBranches` for the data.
 * The tab is a WebviewPanel with a strict CSP (scripts by nonce only, styles from the extension)
 * running dist/compare.js (webview/src/compare/), which renders the data it is posted (markdown
 * sanitised) and asks for it again when VS Code re-creates it.
 */
import * as vscode from 'vscode';
import { tabPageHtml } from '../tab-page';
import type { EngineClient } from '../../client/engine-client';
import type { BranchView } from '../../protocol/commands/branches';
import type { CommandResult } from '../../protocol/commands/index';
import type { ExtensionContribution } from '../contribution';
import { defaultLeaves, MAX_COMPARED_BRANCHES, offeredBranches, validPick } from './leaves';

export const COMPARE_COMMAND = 'vox.compareBranches';
export const COMPARE_PANEL_TYPE = 'vox.compareBranches';
/** Threads offered when the command runs from the palette (the newest first). */
const PICK_THREADS = 30;
/** Characters of a branch's last message shown in the branch pick. */
const PICK_PREVIEW_CHARS = 80;

/** What the compare webview is posted (webview/src/compare/data.ts checks it). */
export interface ComparePayload {
  type: 'compare';
  threadTitle: string;
  /** The compared branches, in column order. */
  branches: BranchView[];
  data: CommandResult<'compareBranches'>;
}

function compareHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return tabPageHtml(webview, extensionUri, 'compare', 'Compare branches');
}

async function pickThread(client: EngineClient): Promise<string | undefined> {
  const { threads } = await client.call('listThreads', { limit: PICK_THREADS });
  if (threads.length === 0) {
    void vscode.window.showInformationMessage('Vox: there is no thread yet.');
    return undefined;
  }
  const items = threads.map((t) => ({ label: t.title, description: new Date(t.updatedAt).toLocaleString(), threadId: t.id }));
  return (await vscode.window.showQuickPick(items, { placeHolder: 'Compare the branches of which thread?' }))?.threadId;
}

/** The leaves to compare: all when they fit, else the user's pick (active + newest preselected). */
async function pickLeaves(tree: CommandResult<'getThreadTree'>): Promise<string[] | undefined> {
  const preset = defaultLeaves(tree.branches);
  if (!preset) {
    void vscode.window.showInformationMessage('Vox: this thread has one branch. Regenerate an answer or edit a message to make another.');
    return undefined;
  }
  if (tree.branches.length <= MAX_COMPARED_BRANCHES) return preset;
  const byId = new Map(tree.messages.map((m) => [m.id, m]));
  const items = offeredBranches(tree.branches).map((b) => ({
    label: b.name,
    description: `${b.length} messages${b.active ? ' · open' : ''}`,
    detail: (byId.get(b.leafId)?.content ?? '').replace(/\s+/g, ' ').slice(0, PICK_PREVIEW_CHARS),
    picked: preset.includes(b.leafId),
    leafId: b.leafId,
  }));
  for (;;) {
    const picks = await vscode.window.showQuickPick(items, { canPickMany: true, placeHolder: `Compare 2 to ${MAX_COMPARED_BRANCHES} branches` });
    if (!picks) return undefined;
    const leaves = picks.map((p) => p.leafId);
    if (validPick(leaves)) return leaves;
    for (const it of items) it.picked = leaves.includes(it.leafId);
    void vscode.window.showWarningMessage(`Vox: pick 2 to ${MAX_COMPARED_BRANCHES} branches (you picked ${leaves.length}).`);
  }
}

/** One tab per thread; comparing again updates it. */
class ComparePanels implements vscode.Disposable {
  private readonly panels = new Map<string, { panel: vscode.WebviewPanel; payload: ComparePayload }>();

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {}

  show(threadId: string, payload: ComparePayload): vscode.WebviewPanel {
    const open = this.panels.get(threadId);
    if (open) {
      open.payload = payload;
      void open.panel.webview.postMessage(payload);
      open.panel.title = this.title(payload);
      open.panel.reveal();
      return open.panel;
    }
    const panel = vscode.window.createWebviewPanel(COMPARE_PANEL_TYPE, this.title(payload), vscode.ViewColumn.Active, {
      enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extensionUri, 'dist')],
    });
    panel.iconPath = vscode.Uri.joinPath(this.ctx.extensionUri, 'media', 'vox.svg');
    const entry = { panel, payload };
    this.panels.set(threadId, entry);
    // The page asks for its data when it (re)loads: VS Code re-creates a hidden tab's page.
    panel.webview.onDidReceiveMessage((m: unknown) => {
      if (m && typeof m === 'object' && (m as { type?: unknown }).type === 'ready') void panel.webview.postMessage(entry.payload);
      else this.log.warn(`compare tab: unexpected message ${JSON.stringify(m).slice(0, 200)}`);
    });
    panel.onDidDispose(() => this.panels.delete(threadId));
    panel.webview.html = compareHtml(panel.webview, this.ctx.extensionUri);
    return panel;
  }

  private title(p: ComparePayload): string {
    return `Compare: ${p.threadTitle}`;
  }

  dispose(): void {
    for (const { panel } of this.panels.values()) panel.dispose();
    this.panels.clear();
  }
}

/** `vox.compareBranches` ([threadId]: from the chat; none: the palette asks for a thread) and its tabs. */
export const compareBranches: ExtensionContribution = {
  name: 'branch comparison',
  commands: [COMPARE_COMMAND],
  activate({ ctx, host, log }, scope) {
    const panels = new ComparePanels(ctx, log);
    scope.command(COMPARE_COMMAND, async (arg?: unknown) => {
      const client = await host.client();
      const threadId = typeof arg === 'string' ? arg : await pickThread(client);
      if (!threadId) return undefined;
      const tree = await client.call('getThreadTree', { threadId });
      const leafIds = await pickLeaves(tree);
      if (!leafIds) return undefined;
      const data = await client.call('compareBranches', { threadId, leafIds });
      const { thread } = await client.call('getThread', { threadId });
      const byLeaf = new Map(tree.branches.map((b) => [b.leafId, b]));
      const branches = data.columns.map((c) => byLeaf.get(c.leafId) ?? { branchId: c.branchId, name: c.name, leafId: c.leafId, forkMessageId: null, length: 0, updatedAt: 0, active: false });
      panels.show(threadId, { type: 'compare', threadTitle: thread.title, branches, data });
      return undefined;
    }, { log });
    scope.add(panels);
  },
};
