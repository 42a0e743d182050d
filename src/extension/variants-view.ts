/**
 * "Vox Variants" tree in the Source Control container: one prompt run as 1..4 variants in
 * managed worktrees, each with its model, live status and diff stats. Actions: Open Diff (all
 * changed files, base ↔ variant), Adopt (apply as a patch; refused on conflict with the files
 * named), Discard, Cancel all. "Vox: Run Prompt as Variants…" starts a set.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { VariantGroup } from '../engine/variants/group';
import type { VariantInfo } from '../engine/variants/types';
import { MAX_VARIANTS } from '../engine/variants/types';
import type { EngineHost } from './engine-host';
import { guardedCommand } from './guarded-command';
import { checkpointUri } from './checkpoint-documents';

export const VARIANTS_VIEW_ID = 'vox.variants';

type Node = { kind: 'group'; group: VariantGroup } | { kind: 'variant'; group: VariantGroup; info: VariantInfo };

const STATUS_ICON: Record<string, string> = {
  creating: 'loading~spin', running: 'sync~spin', completed: 'pass', failed: 'error', cancelled: 'circle-slash', adopted: 'check-all', discarded: 'trash',
};

export class VariantsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly watched = new Set<VariantGroup>();
  private readonly subs: { dispose(): void }[] = [];

  constructor(private readonly host: EngineHost) {}

  track(group: VariantGroup): void {
    if (this.watched.has(group)) return;
    this.watched.add(group);
    this.subs.push(group.onDidChange(() => this.changed.fire(undefined)));
    this.changed.fire(undefined);
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    const engine = this.host.current;
    if (!engine) return [];
    if (!node) {
      const groups = engine.variants.list();
      for (const g of groups) this.track(g);
      return groups.map((group) => ({ kind: 'group', group }));
    }
    if (node.kind === 'group') return node.group.variants.map((info) => ({ kind: 'variant', group: node.group, info }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(node.group.prompt.slice(0, 80), vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.group.variants.length} variants${node.group.adopted !== null ? ` · adopted #${node.group.adopted}` : ''}`;
      item.contextValue = 'voxVariantGroup';
      item.iconPath = new vscode.ThemeIcon('git-compare');
      return item;
    }
    const v = node.info;
    const item = new vscode.TreeItem(`#${v.index} ${v.model}`, vscode.TreeItemCollapsibleState.None);
    const files = v.stats.files.length;
    item.description = `${v.status} · ${files} file${files === 1 ? '' : 's'} +${v.stats.additions} −${v.stats.deletions}`;
    item.tooltip = `${v.worktreePath}${v.error ? `\n${v.error}` : ''}`;
    item.iconPath = new vscode.ThemeIcon(STATUS_ICON[v.status] ?? 'circle-outline');
    item.contextValue = `voxVariant.${v.status}`;
    item.command = { command: 'vox.variants.openDiff', title: 'Open Diff', arguments: [node] };
    return item;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.changed.dispose();
  }
}

async function pickVariant(host: EngineHost, node: unknown): Promise<{ group: VariantGroup; index: number } | undefined> {
  const n = node as Node | undefined;
  if (n?.kind === 'variant') return { group: n.group, index: n.info.index };
  const engine = await host.get();
  const items = engine.variants.list().flatMap((group) => group.variants.map((v) => ({ label: `#${v.index} ${v.model}`, description: `${v.status} · ${group.prompt.slice(0, 40)}`, group, index: v.index })));
  if (items.length === 0) return void vscode.window.showInformationMessage('Vox: no variants. Start some with "Vox: Run Prompt as Variants…".');
  return vscode.window.showQuickPick(items, { placeHolder: 'Variant' });
}

export function registerVariantCommands(host: EngineHost, view: VariantsView): vscode.Disposable[] {
  const cmd = (id: string, fn: (node?: unknown) => Promise<void>) => guardedCommand(id, (node) => fn(node), { after: () => view.refresh() });
  return [
    cmd('vox.variants.start', async () => {
      const engine = await host.get();
      const prompt = await vscode.window.showInputBox({ prompt: `Prompt to run as 1..${MAX_VARIANTS} variants, each in its own worktree`, ignoreFocusOut: true });
      if (!prompt) return;
      const picks = await vscode.window.showQuickPick(
        host.modelChoices().map((m) => ({ label: m.label, description: m.ref, picked: m.ref === host.model() })),
        { canPickMany: true, placeHolder: `Pick 1..${MAX_VARIANTS} models (pick one model several times with "Other…" in settings vox.models)` },
      );
      if (!picks || picks.length === 0) return;
      const group = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: creating variant worktrees…' }, () =>
        engine.variants.startVariants({ repoRoot: engine.workspaceRoot, prompt, models: picks.map((p) => p.description!) }),
      );
      view.track(group);
      await vscode.commands.executeCommand(`${VARIANTS_VIEW_ID}.focus`);
    }),
    cmd('vox.variants.openDiff', async (node) => {
      const v = await pickVariant(host, node);
      if (!v) return;
      const diff = await v.group.diffVariant(v.index);
      if (diff.stats.files.length === 0) return void vscode.window.showInformationMessage(`Vox: variant #${v.index} has no changes yet.`);
      const wt = v.group.variant(v.index).worktreePath;
      const resources = diff.stats.files.map((f) => [vscode.Uri.file(path.join(wt, f.path)), checkpointUri(f.path, diff.base), vscode.Uri.file(path.join(wt, f.path))]);
      await vscode.commands.executeCommand('vscode.changes', `Variant #${v.index} (${v.group.variant(v.index).model}) vs base`, resources);
    }),
    cmd('vox.variants.adopt', async (node) => {
      const v = await pickVariant(host, node);
      if (!v) return;
      const ok = await vscode.window.showWarningMessage(
        `Apply variant #${v.index}'s changes to your workspace and remove the other variants?`,
        { modal: true, detail: 'The changes are applied as a patch; on any conflict nothing is changed.' },
        'Adopt',
      );
      if (ok !== 'Adopt') return;
      const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Vox: adopting variant #${v.index}…` }, () => v.group.adoptVariant(v.index));
      void vscode.window.showInformationMessage(`Vox: adopted variant #${v.index} (${r.files.length} file(s)).`);
    }),
    cmd('vox.variants.discard', async (node) => {
      const v = await pickVariant(host, node);
      if (v) await v.group.discardVariant(v.index);
    }),
    cmd('vox.variants.cancelAll', async () => {
      const engine = await host.get();
      await engine.variants.cancelAll();
    }),
  ];
}
