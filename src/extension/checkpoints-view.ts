/**
 * "Vox Checkpoints" tree in the Source Control container: threads → checkpoints (time, trigger
 * tool, files changed) → files. Actions: Restore… (files / thread / both, with Undo), Compare
 * with Working Tree, Compare with Previous, and Prune old checkpoints (shows the space it frees).
 * Refreshes on checkpoint events from the engine's event log.
 */
import * as vscode from 'vscode';
import type { CheckpointRow } from '../engine/store/store';
import type { EngineHost } from './engine-host';
import { guardedCommand } from './guarded-command';
import { checkpointUri, openCheckpointDiff } from './checkpoint-documents';
import type { RestoreMode } from '../engine/checkpoints/service';

export const CHECKPOINTS_VIEW_ID = 'vox.checkpoints';
/** Days offered by "Prune old checkpoints" as the age limit. */
const PRUNE_AGE_CHOICES_DAYS = [1, 7, 30];

type Node =
  | { kind: 'thread'; threadId: string; title: string; count: number }
  | { kind: 'checkpoint'; row: CheckpointRow; prevRef: string | null }
  | { kind: 'file'; row: CheckpointRow; path: string; status: string };

function ago(ms: number): string {
  const s = Math.round((Date.now() - ms) / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86_400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toLocaleDateString();
}

export class CheckpointsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private unsubscribe: (() => void) | undefined;
  private readonly hostSub: vscode.Disposable;

  constructor(private readonly host: EngineHost) {
    // The engine was rebuilt (settings, API key) or the model changed: follow the current engine's
    // store, and re-read the tree (getChildren subscribes to a rebuilt engine once it is started).
    this.hostSub = host.onDidChange(() => {
      this.watch();
      this.refresh();
    });
  }

  private watch(): void {
    this.unsubscribe?.();
    // Cleared even when there is no engine now, so getChildren subscribes to the next one.
    this.unsubscribe = undefined;
    const engine = this.host.current;
    if (!engine) return;
    const sub = engine.store.subscribe(engine.store.lastSeq(), (evs) => {
      if (evs.some((e) => e.type.startsWith('checkpoint.') || e.type.startsWith('thread.'))) this.refresh();
    });
    this.unsubscribe = sub.unsubscribe;
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    const engine = await this.host.get();
    if (!this.unsubscribe) this.watch();
    if (!node) {
      return engine.store
        .listThreads()
        .map((t) => ({ kind: 'thread' as const, threadId: t.id, title: t.title, count: engine.store.checkpoints(t.id).length }))
        .filter((t) => t.count > 0);
    }
    if (node.kind === 'thread') {
      const rows = engine.store.checkpoints(node.threadId);
      return rows.map((row, i) => ({ kind: 'checkpoint' as const, row, prevRef: i > 0 ? rows[i - 1]!.ref : null })).reverse();
    }
    if (node.kind === 'checkpoint') {
      const infos = await engine.checkpoints.list(node.row.threadId);
      const info = infos.find((c) => c.ordinal === node.row.ordinal);
      return (info?.changed ?? []).map((f) => ({ kind: 'file' as const, row: node.row, path: f.path, status: f.status }));
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'thread') {
      const item = new vscode.TreeItem(node.title, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.count} checkpoint${node.count === 1 ? '' : 's'}`;
      item.contextValue = 'voxThread';
      item.iconPath = new vscode.ThemeIcon('comment-discussion');
      return item;
    }
    if (node.kind === 'checkpoint') {
      const r = node.row;
      const what = r.trigger === 'tool' ? `before ${r.toolName ?? 'a tool'}` : r.trigger === 'turnEnd' ? 'turn end' : 'manual';
      const item = new vscode.TreeItem(`#${r.ordinal} ${what}`, r.changedCount > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
      item.description = `${ago(r.createdAt)} · ${r.changedCount} file${r.changedCount === 1 ? '' : 's'} changed${r.overBudgetMs ? ` · slow (${r.overBudgetMs} ms)` : ''}`;
      item.tooltip = new vscode.MarkdownString(
        `**Checkpoint ${r.ordinal}** (${what})\n\n${new Date(r.createdAt).toLocaleString()}\n\n\`${r.ref}\`${r.skippedCount ? `\n\n${r.skippedCount} large untracked file(s) skipped` : ''}`,
      );
      item.contextValue = node.prevRef ? 'voxCheckpoint.hasPrevious' : 'voxCheckpoint';
      item.iconPath = new vscode.ThemeIcon(r.trigger === 'turnEnd' ? 'pass' : 'history');
      item.id = `${r.threadId}#${r.ordinal}`;
      return item;
    }
    const item = new vscode.TreeItem(node.path, vscode.TreeItemCollapsibleState.None);
    item.description = node.status;
    item.contextValue = 'voxCheckpointFile';
    item.iconPath = vscode.ThemeIcon.File;
    // A vox-checkpoint: URI gives the file-type icon without the working tree's git decorations.
    item.resourceUri = checkpointUri(node.path, node.row.ref);
    item.command = { command: 'vox.checkpoint.compareFileWithWorking', title: 'Compare with Working Tree', arguments: [node] };
    return item;
  }

  dispose(): void {
    this.hostSub.dispose();
    this.unsubscribe?.();
    this.changed.dispose();
  }
}

async function pickCheckpoint(host: EngineHost, node: unknown): Promise<{ row: CheckpointRow; prevRef: string | null } | undefined> {
  const n = node as Node | undefined;
  if (n?.kind === 'checkpoint') return { row: n.row, prevRef: n.prevRef };
  const engine = await host.get();
  const items = engine.store.listThreads().flatMap((t) => {
    const rows = engine.store.checkpoints(t.id);
    return rows.map((row, i) => ({ label: `#${row.ordinal} ${row.trigger === 'tool' ? `before ${row.toolName}` : row.trigger}`, description: `${t.title} · ${ago(row.createdAt)}`, row, prevRef: i > 0 ? rows[i - 1]!.ref : null }));
  });
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Vox: no checkpoints yet. They are taken before every file-changing tool call and at each turn end.');
    return undefined;
  }
  return vscode.window.showQuickPick(items.reverse(), { placeHolder: 'Checkpoint' });
}

export function registerCheckpointCommands(host: EngineHost, view: CheckpointsView): vscode.Disposable[] {
  const cmd = (id: string, fn: (node?: unknown) => Promise<void>) => guardedCommand(id, (node) => fn(node));
  return [
    cmd('vox.checkpoint.refresh', async () => view.refresh()),
    cmd('vox.checkpoint.restore', async (node) => {
      const cp = await pickCheckpoint(host, node);
      if (!cp) return;
      const modes: (vscode.QuickPickItem & { mode: RestoreMode })[] = [
        { label: 'Files and conversation', description: 'both', detail: 'Working tree back to this checkpoint, and the thread rewinds to that point (later messages stay as a branch).', mode: 'both' },
        { label: 'Files only', description: 'files', detail: 'Working tree back to this checkpoint; the conversation is unchanged.', mode: 'files' },
        { label: 'Conversation only', description: 'thread', detail: 'Rewind the thread; files are unchanged.', mode: 'thread' },
      ];
      const pick = await vscode.window.showQuickPick(modes, { placeHolder: `Restore checkpoint #${cp.row.ordinal}` });
      if (!pick) return;
      const engine = await host.get();
      const outcome = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Vox: restoring checkpoint #${cp.row.ordinal}…` }, () =>
        engine.checkpoints.restore(cp.row.threadId, cp.row.ordinal, pick.mode),
      );
      view.refresh();
      const files = outcome.files;
      const msg = files ? `Vox: restored ${files.changed.length} file(s) to checkpoint #${cp.row.ordinal}. Your previous state is saved.` : `Vox: the thread was rewound to checkpoint #${cp.row.ordinal}.`;
      const action = files ? await vscode.window.showInformationMessage(msg, 'Undo') : (void vscode.window.showInformationMessage(msg), undefined);
      if (action === 'Undo' && files) {
        const undone = await engine.checkpoints.undo(files.restorePoint);
        void vscode.window.showInformationMessage(`Vox: restore undone (${undone.changed.length} file(s) back).`);
      }
    }),
    cmd('vox.checkpoint.compareWithWorking', async (node) => {
      const cp = await pickCheckpoint(host, node);
      if (cp) await openCheckpointDiff(host, `Checkpoint #${cp.row.ordinal} ↔ Working Tree`, cp.row.ref, 'working');
    }),
    cmd('vox.checkpoint.compareWithPrevious', async (node) => {
      const cp = await pickCheckpoint(host, node);
      if (!cp) return;
      if (!cp.prevRef) return void vscode.window.showInformationMessage('Vox: this is the first checkpoint of its thread.');
      await openCheckpointDiff(host, `Checkpoint #${cp.row.ordinal - 1} ↔ #${cp.row.ordinal}`, cp.prevRef, cp.row.ref);
    }),
    cmd('vox.checkpoint.compareFileWithWorking', async (node) => {
      const n = node as Node | undefined;
      if (n?.kind !== 'file') return;
      await openCheckpointDiff(host, `#${n.row.ordinal} ↔ Working Tree`, n.row.ref, 'working', n.path);
    }),
    cmd('vox.checkpoint.capture', async () => {
      const engine = await host.get();
      const threads = engine.store.listThreads();
      const pick = await vscode.window.showQuickPick(threads.map((t) => ({ label: t.title, threadId: t.id })), { placeHolder: 'Capture a checkpoint for which thread?' });
      if (!pick) return;
      const r = await engine.checkpoints.capture(pick.threadId, { trigger: 'manual' });
      void vscode.window.showInformationMessage(`Vox: checkpoint #${r.ordinal} captured in ${Math.round(r.tookMs)} ms (${r.changedCount} file(s) changed).`);
    }),
    cmd('vox.checkpoint.undoRestore', async () => {
      const engine = await host.get();
      const points = await engine.checkpoints.git.listRestorePoints(engine.workspaceRoot);
      if (points.length === 0) return void vscode.window.showInformationMessage('Vox: no restore points.');
      const pick = await vscode.window.showQuickPick(
        points.sort((a, b) => b.timeMs - a.timeMs).map((p) => ({ label: new Date(p.timeMs).toLocaleString(), description: p.ref, p })),
        { placeHolder: 'Undo which restore? (the files go back to how they were just before it)' },
      );
      if (!pick) return;
      const r = await engine.checkpoints.undo(pick.p.ref);
      void vscode.window.showInformationMessage(`Vox: restore undone (${r.changed.length} file(s)).`);
    }),
    cmd('vox.checkpoint.prune', async () => {
      const engine = await host.get();
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Keep the last 10 per thread', opts: { keepLast: 10 } },
          ...PRUNE_AGE_CHOICES_DAYS.map((d) => ({ label: `Delete checkpoints older than ${d} day${d === 1 ? '' : 's'}`, opts: { olderThanMs: d * 86_400_000, restorePointsOlderThanMs: d * 86_400_000 } })),
        ],
        { placeHolder: 'Prune old checkpoints' },
      );
      if (!pick) return;
      const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: pruning checkpoints…' }, () => engine.checkpoints.prune(pick.opts));
      view.refresh();
      const mb = (r.reclaimableBytes / 1_048_576).toFixed(1);
      void vscode.window.showInformationMessage(`Vox: deleted ${r.deletedRefs.length} checkpoint ref(s); ${mb} MB can be reclaimed by git's next garbage collection.`);
    }),
  ];
}
