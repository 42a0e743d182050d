/**
 * "Vox Variants" tree in the Source Control container: one prompt run as 1..4 variants in
 * managed worktrees, each with its model, live status and diff stats. Actions: Open Diff (all
 * changed files, base ↔ variant), Adopt (apply as a patch; refused on conflict with the files
 * named), Discard, Cancel all. "Vox: Run Prompt as Variants…" starts a set. A protocol client:
 * the tree is the last `variants` update of `watchVariants`. A diff tab of a variant whose
 * worktree is gone (adopted, discarded, cleared — also one VS Code restored after a reload) is
 * closed (./variant-tabs.ts).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EngineClient } from '../client/engine-client';
import { MAX_VARIANTS, type VariantPoolView, type VariantView } from '../protocol/commands/variants';
import type { EngineHost } from './engine-host';
import { checkpointUri } from './checkpoint-documents';
import { OPENED_VARIANT_DIFFS_KEY, VARIANTS_VIEW_DESCRIPTION, openedDiffsAfter, staleVariantDiffs, tabShowsDiff, variantDiffTitle, type OpenedVariantDiff } from './variant-tabs';
import type { ContributionScope, ExtensionContribution } from './contribution';

export const VARIANTS_VIEW_ID = 'vox.variants';

type Node = { kind: 'group'; pool: VariantPoolView } | { kind: 'variant'; pool: VariantPoolView; info: VariantView };

/** Characters of a failed variant's reason shown in its row (the tooltip has all of it). */
const FAILURE_REASON_MAX_CHARS = 120;
const STATUS_ICON: Record<string, string> = {
  creating: 'loading~spin', running: 'sync~spin', completed: 'pass', failed: 'error', cancelled: 'circle-slash', adopted: 'check-all', discarded: 'trash',
};

export class VariantsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private pools: VariantPoolView[] = [];
  private watching: Promise<void> | undefined;
  private stop: (() => void) | undefined;

  constructor(private readonly host: EngineHost, private readonly state: vscode.Memento) {}

  /** The variant diffs this view opened (and VS Code may restore after a reload). */
  get openedDiffs(): OpenedVariantDiff[] {
    return this.state.get<OpenedVariantDiff[]>(OPENED_VARIANT_DIFFS_KEY, []);
  }

  rememberDiff(d: OpenedVariantDiff): void {
    void this.state.update(OPENED_VARIANT_DIFFS_KEY, [...this.openedDiffs.filter((x) => x.title !== d.title), d]);
  }

  /** Closes the diff tabs of variants whose worktree is gone and forgets them. */
  private closeStaleDiffs(): void {
    const opened = this.openedDiffs;
    if (opened.length === 0) return;
    const stale = staleVariantDiffs(opened, this.pools).map((d) => d.title);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => stale.some((title) => tabShowsDiff(t.label, title)));
    if (tabs.length > 0) void vscode.window.tabGroups.close(tabs);
    void this.state.update(OPENED_VARIANT_DIFFS_KEY, openedDiffsAfter(opened, this.pools));
  }

  /** Subscribes once; every status or stats change re-renders the tree. */
  watch(client: EngineClient): Promise<void> {
    this.watching ??= (async () => {
      this.stop = client.on('variants', (u) => {
        this.pools = u.pools;
        this.changed.fire(undefined);
        this.closeStaleDiffs();
      });
      await client.call('watchVariants', {});
    })();
    return this.watching;
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      await this.watch(await this.host.client());
      return this.pools.map((pool) => ({ kind: 'group', pool }));
    }
    if (node.kind === 'group') return node.pool.variants.map((info) => ({ kind: 'variant', pool: node.pool, info }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(node.pool.prompt.slice(0, 80), vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.pool.variants.length} variants${node.pool.adopted !== null ? ` · adopted #${node.pool.adopted}` : ''}`;
      const finished = node.pool.variants.every((v) => ['completed', 'failed', 'cancelled', 'adopted', 'discarded'].includes(v.status));
      item.contextValue = finished ? 'voxVariantGroup.finished' : 'voxVariantGroup';
      item.iconPath = new vscode.ThemeIcon('git-compare');
      return item;
    }
    const v = node.info;
    const item = new vscode.TreeItem(`#${v.index} ${v.model}`, vscode.TreeItemCollapsibleState.None);
    const files = v.stats.files.length;
    // A failure's reason is in the row itself, not only in the tooltip.
    item.description = v.status === 'failed'
      ? `failed: ${(v.error ?? 'no reason recorded').slice(0, FAILURE_REASON_MAX_CHARS)}`
      : `${v.status} · ${files} file${files === 1 ? '' : 's'} +${v.stats.additions} −${v.stats.deletions}`;
    item.tooltip = `${v.worktreePath}${v.error ? `\n${v.error}` : ''}`;
    item.iconPath = new vscode.ThemeIcon(STATUS_ICON[v.status] ?? 'circle-outline');
    item.contextValue = `voxVariant.${v.status}`;
    item.command = { command: 'vox.variants.openDiff', title: 'Open Diff', arguments: [node] };
    return item;
  }

  /** The pools as last reported (for pickers). */
  get current(): VariantPoolView[] {
    return this.pools;
  }

  dispose(): void {
    this.stop?.();
    this.changed.dispose();
  }
}

async function pickVariant(host: EngineHost, view: VariantsView, node: unknown): Promise<{ poolId: string; index: number; model: string } | undefined> {
  const n = node as Node | undefined;
  if (n?.kind === 'variant') return { poolId: n.pool.poolId, index: n.info.index, model: n.info.model };
  await view.watch(await host.client());
  const items = view.current.flatMap((pool) =>
    pool.variants.map((v) => ({ label: `#${v.index} ${v.model}`, description: `${v.status} · ${pool.prompt.slice(0, 40)}`, poolId: pool.poolId, index: v.index, model: v.model })),
  );
  if (items.length === 0) return void vscode.window.showInformationMessage('Vox: no variants. Start some with "Vox: Run Prompt as Variants…".');
  return vscode.window.showQuickPick(items, { placeHolder: 'Variant' });
}

function registerVariantCommands(host: EngineHost, view: VariantsView, scope: ContributionScope): void {
  const cmd = (id: string, fn: (node?: unknown) => Promise<void>) => scope.command(id, (node) => fn(node), { after: () => view.refresh() });
  cmd('vox.variants.start', async () => {
    const client = await host.client();
    await view.watch(client);
    const prompt = await vscode.window.showInputBox({ prompt: `Prompt to run as 1..${MAX_VARIANTS} variants, each in its own worktree`, ignoreFocusOut: true });
    if (!prompt) return;
    const picks = await vscode.window.showQuickPick(
      host.modelChoices().map((m) => ({ label: m.label, description: m.ref, picked: m.ref === host.model() })),
      { canPickMany: true, placeHolder: `Pick 1..${MAX_VARIANTS} models (pick one model several times with "Other…" in settings vox.models)` },
    );
    if (!picks || picks.length === 0) return;
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: creating variant worktrees…' }, () =>
      client.call('startVariants', { prompt, models: picks.map((p) => p.description!) }),
    );
    await vscode.commands.executeCommand(`${VARIANTS_VIEW_ID}.focus`);
  });
  cmd('vox.variants.openDiff', async (node) => {
    const v = await pickVariant(host, view, node);
    if (!v) return;
    const diff = await (await host.client()).call('diffVariant', { poolId: v.poolId, index: v.index });
    if (diff.stats.files.length === 0) return void vscode.window.showInformationMessage(`Vox: variant #${v.index} has no changes yet.`);
    const wt = diff.worktreePath;
    const resources = diff.stats.files.map((f) => [vscode.Uri.file(path.join(wt, f.path)), checkpointUri(f.path, diff.base), vscode.Uri.file(path.join(wt, f.path))]);
    const title = variantDiffTitle(v);
    view.rememberDiff({ poolId: v.poolId, index: v.index, title });
    await vscode.commands.executeCommand('vscode.changes', title, resources);
  });
  cmd('vox.variants.adopt', async (node) => {
    const v = await pickVariant(host, view, node);
    if (!v) return;
    const ok = await vscode.window.showWarningMessage(
      `Apply variant #${v.index}'s changes to your workspace and remove the other variants?`,
      { modal: true, detail: 'The changes are applied as a patch; on any conflict nothing is changed.' },
      'Adopt',
    );
    if (ok !== 'Adopt') return;
    const client = await host.client();
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Vox: adopting variant #${v.index}…` }, () =>
      client.call('adoptVariant', { poolId: v.poolId, index: v.index }),
    );
    void vscode.window.showInformationMessage(`Vox: adopted variant #${v.index} (${r.files.length} file(s)).`);
  });
  cmd('vox.variants.discard', async (node) => {
    const v = await pickVariant(host, view, node);
    if (v) await (await host.client()).call('discardVariant', { poolId: v.poolId, index: v.index });
  });
  cmd('vox.variants.clear', async (node) => {
    const n = node as Node | undefined;
    const pools = n?.kind === 'group' ? [n.pool] : view.current;
    const pick = pools.length === 1 ? pools[0] : (await vscode.window.showQuickPick(pools.map((p) => ({ label: p.prompt.slice(0, 80), p })), { placeHolder: 'Clear which variant group?' }))?.p;
    if (!pick) return;
    const r = await (await host.client()).call('clearVariants', { poolId: pick.poolId });
    void vscode.window.showInformationMessage(`Vox: cleared the variant group (${r.removed.length} worktree${r.removed.length === 1 ? '' : 's'} removed).`);
  });
  cmd('vox.variants.cancelAll', async () => {
    await (await host.client()).call('cancelVariants', {});
  });
}

/** The "Vox Variants" tree and its commands (its diffs read `vox-checkpoint:` documents, served by the checkpoints contribution). */
export const variants: ExtensionContribution<VariantsView> = {
  name: 'variants view',
  commands: ['vox.variants.start', 'vox.variants.openDiff', 'vox.variants.adopt', 'vox.variants.discard', 'vox.variants.clear', 'vox.variants.cancelAll'],
  activate({ host, ctx, log }, scope) {
    const view = scope.add(new VariantsView(host, ctx.workspaceState));
    const tree = scope.add(vscode.window.createTreeView(VARIANTS_VIEW_ID, { treeDataProvider: view }));
    tree.description = VARIANTS_VIEW_DESCRIPTION;
    registerVariantCommands(host, view, scope);
    // Diff tabs VS Code restored after a reload: the first `variants` update closes the stale ones.
    if (view.openedDiffs.length > 0) void host.client().then((c) => view.watch(c)).catch((e: unknown) => log.warn(`variants: checking the restored diff tabs failed: ${(e as Error).message}`));
    return view;
  },
};
