/**
 * "Vox Checkpoints" tree in the Source Control container: threads → checkpoints (time, trigger
 * tool, files changed) → files. Actions: Restore… (files / thread / both, with Undo), Compare
 * with Working Tree, Compare with Previous, and Prune old checkpoints (shows the space it frees).
 * A protocol client like any other: it lists with `listCheckpoints` / `listCheckpointFiles` and
 * refreshes on the `threadChanged` notices of `watchThreads`.
 */
import * as vscode from 'vscode';
import type { EngineClient } from '../client/engine-client';
import type { CheckpointView } from '../protocol/commands/checkpoints';
import type { CommandResult } from '../protocol/commands/index';
import type { RestoreMode } from '../protocol/events';
import type { EngineHost } from './engine-host';
import { CheckpointDocuments, CHECKPOINT_SCHEME, checkpointUri, openCheckpointDiff } from './checkpoint-documents';
import type { ContributionScope, ExtensionContribution } from './contribution';

export const CHECKPOINTS_VIEW_ID = 'vox.checkpoints';
/** Days offered by "Prune old checkpoints" as the age limit. */
const PRUNE_AGE_CHOICES_DAYS = [1, 7, 30];
/** How often the view refreshes by itself (relative times; checkpoints taken by other processes such as the CLI). */
const CHECKPOINTS_REFRESH_MS = 30_000;
/** Threads offered by "Capture Checkpoint Now" (the most recent ones). */
const CAPTURE_PICK_THREADS = 100;

type Node =
  | { kind: 'thread'; threadId: string; title: string; rows: CheckpointView[] }
  | { kind: 'checkpoint'; row: CheckpointView; prevRef: string | null }
  | { kind: 'file'; row: CheckpointView; path: string; rawBase64?: string; status: string };

function ago(ms: number): string {
  const s = Math.round((Date.now() - ms) / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86_400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toLocaleDateString();
}

/** Checkpoints grouped by thread, newest thread activity first as the store listed them. */
async function threadsWithCheckpoints(client: EngineClient): Promise<Array<Extract<Node, { kind: 'thread' }>>> {
  const { checkpoints, threads } = await client.call('listCheckpoints', {});
  return threads.map((t) => ({ kind: 'thread' as const, threadId: t.threadId, title: t.title, rows: checkpoints.filter((c) => c.threadId === t.threadId) }));
}

export class CheckpointsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private watching: Promise<void> | undefined;
  private stop: (() => void) | undefined;

  /** Refreshes while the view has been shown: relative times move on, and checkpoints other processes (the CLI) took appear. */
  private readonly ticker = setInterval(() => {
    if (this.watching) this.refresh();
  }, CHECKPOINTS_REFRESH_MS);

  constructor(private readonly host: EngineHost) {}

  /** Subscribes once to thread changes (checkpoints captured, restored, pruned; threads renamed). */
  private watch(client: EngineClient): Promise<void> {
    this.watching ??= (async () => {
      this.stop = client.on('threadChanged', (u) => {
        if (u.eventType.startsWith('checkpoint.') || u.eventType.startsWith('thread.')) this.refresh();
      });
      await client.call('watchThreads', {});
    })();
    return this.watching;
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    const client = await this.host.client();
    await this.watch(client);
    if (!node) return (await threadsWithCheckpoints(client)).filter((t) => t.rows.length > 0);
    if (node.kind === 'thread') return node.rows.map((row, i) => ({ kind: 'checkpoint' as const, row, prevRef: i > 0 ? node.rows[i - 1]!.ref : null })).reverse();
    if (node.kind === 'checkpoint') {
      try {
        const { files } = await client.call('listCheckpointFiles', { threadId: node.row.threadId, ordinal: node.row.ordinal });
        return files.map((f) => ({ kind: 'file' as const, row: node.row, path: f.path, ...(f.rawBase64 ? { rawBase64: f.rawBase64 } : {}), status: f.status }));
      } catch {
        return []; // pruned meanwhile: the next refresh drops the node
      }
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'thread') {
      const item = new vscode.TreeItem(node.title, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.rows.length} checkpoint${node.rows.length === 1 ? '' : 's'}`;
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
    clearInterval(this.ticker);
    this.stop?.();
    this.changed.dispose();
  }
}

async function pickCheckpoint(host: EngineHost, node: unknown): Promise<{ row: CheckpointView; prevRef: string | null } | undefined> {
  const n = node as Node | undefined;
  if (n?.kind === 'checkpoint') return { row: n.row, prevRef: n.prevRef };
  const threads = await threadsWithCheckpoints(await host.client());
  const items = threads.flatMap((t) =>
    t.rows.map((row, i) => ({ label: `#${row.ordinal} ${row.trigger === 'tool' ? `before ${row.toolName}` : row.trigger}`, description: `${t.title} · ${ago(row.createdAt)}`, row, prevRef: i > 0 ? t.rows[i - 1]!.ref : null })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Vox: no checkpoints yet. They are taken before every file-changing tool call and at each turn end.');
    return undefined;
  }
  return vscode.window.showQuickPick(items.reverse(), { placeHolder: 'Checkpoint' });
}

/** Paths named in a restore's summary per kind (the rest are counted). */
const RESTORE_EFFECT_NAMED = 5;

/** Paths listed per owner in the "asks once more" dialog (the rest are counted). */
const CONFIRM_NAMED = 10;
type Preview = CommandResult<'previewRestore'>;

/**
 * When a restore would delete files this thread did not write, asks once more with a modal
 * listing them by owner (hand-made; other threads'; this thread's). True: go on.
 */
async function confirmDeletions(p: Preview, ordinal: number): Promise<boolean> {
  if (!p.confirm) return true;
  const list = (ps: string[]) => `${ps.slice(0, CONFIRM_NAMED).map((x) => `  ${x}`).join('\n')}${ps.length > CONFIRM_NAMED ? `\n  …and ${ps.length - CONFIRM_NAMED} more` : ''}`;
  const by = p.deletedBy;
  const detail = [
    ...(by.handMade.length ? [`Not written by Vox (hand-made or from another tool):\n${list(by.handMade.map((x) => x.path))}`] : []),
    ...(by.otherThreads.length ? [`Written by other threads:\n${list(by.otherThreads.map((x) => `${x.path} — "${x.title}"`))}`] : []),
    ...(by.thisThread.length ? [`Written by this thread:\n${list(by.thisThread.map((x) => x.path))}`] : []),
    'A restore point is saved first: "Undo restore" (Checkpoints view title, or the palette) puts them back.',
  ].join('\n\n');
  const n = by.handMade.length + by.otherThreads.length;
  const go = await vscode.window.showWarningMessage(
    `Restoring checkpoint #${ordinal} deletes ${n} file${n === 1 ? '' : 's'} this thread did not write.`,
    { modal: true, detail },
    'Restore and Delete Them',
  );
  return go === 'Restore and Delete Them';
}

/** "Deletes 1 file created since: x.txt. Overwrites 2: a.txt, b.txt." — from `previewRestore`. */
async function restoreEffect(client: EngineClient, threadId: string, ordinal: number): Promise<{ text: string; preview: Preview }> {
  const r = await client.call('previewRestore', { threadId, ordinal });
  const names = (ps: Array<{ path: string }>) => `${ps.slice(0, RESTORE_EFFECT_NAMED).map((p) => p.path).join(', ')}${ps.length > RESTORE_EFFECT_NAMED ? `, and ${ps.length - RESTORE_EFFECT_NAMED} more` : ''}`;
  const parts = [
    r.deleted.length ? `Deletes ${r.deleted.length} file${r.deleted.length === 1 ? '' : 's'} created since: ${names(r.deleted)}.` : 'Deletes nothing.',
    ...(r.overwritten.length ? [`Overwrites ${r.overwritten.length}: ${names(r.overwritten)}.`] : []),
    ...(r.recreated.length ? [`Brings back ${r.recreated.length}: ${names(r.recreated)}.`] : []),
  ];
  return { text: r.deleted.length + r.overwritten.length + r.recreated.length === 0 ? 'The files already match it.' : parts.join(' '), preview: r };
}

function registerCheckpointCommands(host: EngineHost, view: CheckpointsView, scope: ContributionScope): void {
  // The Undo of the last restore stays reachable after its notification hides (VS Code hides an
  // info toast with actions after a while): a status-bar item until it is used or replaced.
  const undoItem = scope.add(vscode.window.createStatusBarItem('vox.undoRestore', vscode.StatusBarAlignment.Left, 0));
  undoItem.name = 'Vox: Undo restore';
  const offerUndo = (restorePoint: string, files: number, ordinal: number): void => {
    undoItem.text = '$(discard) Undo restore';
    undoItem.tooltip = `Vox: put back the ${files} file(s) as they were before restoring checkpoint #${ordinal}`;
    undoItem.command = { command: 'vox.checkpoint.undoRestore', title: 'Undo restore', arguments: [restorePoint] };
    undoItem.show();
  };
  const cmd = (id: string, fn: (node?: unknown) => Promise<void>) => scope.command(id, (node) => fn(node));
  cmd('vox.checkpoint.refresh', async () => view.refresh());
  cmd('vox.checkpoint.restore', async (node) => {
    const cp = await pickCheckpoint(host, node);
    if (!cp) return;
    // What the files part of the restore will do, named before it runs.
    const { text: effect, preview } = await restoreEffect(await host.client(), cp.row.threadId, cp.row.ordinal);
    const modes: (vscode.QuickPickItem & { mode: RestoreMode })[] = [
      { label: 'Files and conversation', description: 'both', detail: `Working tree back to this checkpoint, and the thread rewinds to that point (later messages stay as a branch). ${effect}`, mode: 'both' },
      { label: 'Files only', description: 'files', detail: `Working tree back to this checkpoint; the conversation is unchanged. ${effect}`, mode: 'files' },
      { label: 'Conversation only', description: 'thread', detail: 'Rewind the thread; files are unchanged.', mode: 'thread' },
    ];
    const pick = await vscode.window.showQuickPick(modes, { placeHolder: `Restore checkpoint #${cp.row.ordinal}` });
    if (!pick) return;
    if (pick.mode !== 'thread' && !(await confirmDeletions(preview, cp.row.ordinal))) return;
    const client = await host.client();
    const outcome = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Vox: restoring checkpoint #${cp.row.ordinal}…` }, () =>
      client.call('restoreCheckpoint', { threadId: cp.row.threadId, ordinal: cp.row.ordinal, mode: pick.mode }),
    );
    view.refresh();
    const files = outcome.files;
    const msg = files ? `Vox: restored ${files.changed.length} file(s) to checkpoint #${cp.row.ordinal}. Your previous state is saved: "Undo restore" is also in the Checkpoints view title.` : `Vox: the thread was rewound to checkpoint #${cp.row.ordinal}.`;
    if (files) offerUndo(files.restorePoint, files.changed.length, cp.row.ordinal);
    const action = files ? await vscode.window.showInformationMessage(msg, 'Undo') : (void vscode.window.showInformationMessage(msg), undefined);
    if (action === 'Undo' && files && undoItem.command !== undefined) await vscode.commands.executeCommand('vox.checkpoint.undoRestore', files.restorePoint);
  });
  cmd('vox.checkpoint.compareWithWorking', async (node) => {
    const cp = await pickCheckpoint(host, node);
    if (cp) await openCheckpointDiff(host, `Checkpoint #${cp.row.ordinal} ↔ Working Tree`, cp.row.ref, 'working');
  });
  cmd('vox.checkpoint.compareWithPrevious', async (node) => {
    const cp = await pickCheckpoint(host, node);
    if (!cp) return;
    if (!cp.prevRef) return void vscode.window.showInformationMessage('Vox: this is the first checkpoint of its thread.');
    await openCheckpointDiff(host, `Checkpoint #${cp.row.ordinal - 1} ↔ #${cp.row.ordinal}`, cp.prevRef, cp.row.ref);
  });
  cmd('vox.checkpoint.compareFileWithWorking', async (node) => {
    const n = node as Node | undefined;
    if (n?.kind !== 'file') return;
    await openCheckpointDiff(host, `#${n.row.ordinal} ↔ Working Tree`, n.row.ref, 'working', n.path);
  });
  cmd('vox.checkpoint.capture', async () => {
    const client = await host.client();
    const { threads } = await client.call('listThreads', { limit: CAPTURE_PICK_THREADS });
    const pick = await vscode.window.showQuickPick(threads.map((t) => ({ label: t.title, threadId: t.id })), { placeHolder: 'Capture a checkpoint for which thread?' });
    if (!pick) return;
    const r = await client.call('captureCheckpoint', { threadId: pick.threadId });
    void vscode.window.showInformationMessage(`Vox: checkpoint #${r.ordinal} captured in ${r.tookMs} ms (${r.changedCount} file(s) changed).`);
  });
  cmd('vox.checkpoint.undoRestore', async (arg) => {
    const client = await host.client();
    if (typeof arg === 'string') { // the status-bar item's (or the notification's) restore point
      undoItem.hide();
      undoItem.command = undefined;
      const r = await client.call('undoRestore', { restorePoint: arg });
      return void vscode.window.showInformationMessage(`Vox: restore undone (${r.files.changed.length} file(s) back).`);
    }
    const { restorePoints } = await client.call('listRestorePoints', {});
    if (restorePoints.length === 0) return void vscode.window.showInformationMessage('Vox: no restore points.');
    const pick = await vscode.window.showQuickPick(
      restorePoints.map((p) => ({ label: p.label, description: ago(p.timeMs), detail: new Date(p.timeMs).toLocaleString(), p })),
      { placeHolder: 'Undo which restore? (the files go back to how they were just before it)' },
    );
    if (!pick) return;
    const r = await client.call('undoRestore', { restorePoint: pick.p.ref });
    if ((undoItem.command as vscode.Command | undefined)?.arguments?.[0] === pick.p.ref) {
      undoItem.hide();
      undoItem.command = undefined;
    }
    void vscode.window.showInformationMessage(`Vox: restore undone (${r.files.changed.length} file(s)).`);
  });
  cmd('vox.checkpoint.prune', async () => {
    const client = await host.client();
    // A deleted thread's checkpoints are offered first when there are any.
    const { threads: orphans } = await client.call('listOrphanedCheckpoints', {});
    const orphanRefs = orphans.reduce((n, t) => n + t.refs, 0);
    type PruneChoice = vscode.QuickPickItem & { opts?: { keepLast?: number; olderThanMs?: number; restorePointsOlderThanMs?: number }; what: string };
    const choices: PruneChoice[] = [
      ...(orphans.length
        ? [{ label: `Delete the checkpoints of ${orphans.length} deleted thread${orphans.length === 1 ? '' : 's'}`, description: `${orphanRefs} ref${orphanRefs === 1 ? '' : 's'}`, what: `the ${orphanRefs} checkpoint ref(s) of ${orphans.length} deleted thread(s)` }]
        : []),
      { label: 'Keep the last 10 per thread', opts: { keepLast: 10 }, what: 'every checkpoint except the newest 10 of each thread' },
      ...PRUNE_AGE_CHOICES_DAYS.map((d) => {
        const age = `${d} day${d === 1 ? '' : 's'}`;
        return { label: `Delete checkpoints older than ${age}`, opts: { olderThanMs: d * 86_400_000, restorePointsOlderThanMs: d * 86_400_000 }, what: `every checkpoint and restore point older than ${age}` };
      }),
    ];
    const pick = await vscode.window.showQuickPick(choices, { placeHolder: 'Prune old checkpoints' });
    if (!pick) return;
    // Ask first, saying what goes: refs only; files, HEAD, branches and the index are never touched.
    const sure = await vscode.window.showWarningMessage(
      `Vox: delete ${pick.what}? Only Vox's hidden refs are deleted (your files, HEAD, branches and index stay as they are); those checkpoints can no longer be restored.`,
      { modal: true },
      'Delete',
    );
    if (sure !== 'Delete') return;
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: pruning checkpoints…' }, async () => {
      if (pick.opts) return client.call('pruneCheckpoints', pick.opts);
      const all = { deletedRefs: [] as string[], reclaimableBytes: 0 };
      for (const t of orphans) {
        const one = await client.call('pruneCheckpoints', { threadId: t.threadId });
        all.deletedRefs.push(...one.deletedRefs);
        all.reclaimableBytes += one.reclaimableBytes;
      }
      return all;
    });
    view.refresh();
    const mb = (r.reclaimableBytes / 1_048_576).toFixed(1);
    void vscode.window.showInformationMessage(`Vox: deleted ${r.deletedRefs.length} checkpoint ref(s); ${mb} MB can be reclaimed by git's next garbage collection.`);
  });
}

/** The "Vox Checkpoints" tree, its `vox-checkpoint:` documents and its commands. */
export const checkpoints: ExtensionContribution<CheckpointsView> = {
  name: 'checkpoints view',
  commands: [
    'vox.checkpoint.restore', 'vox.checkpoint.compareWithWorking', 'vox.checkpoint.compareWithPrevious', 'vox.checkpoint.compareFileWithWorking',
    'vox.checkpoint.capture', 'vox.checkpoint.undoRestore', 'vox.checkpoint.prune', 'vox.checkpoint.refresh',
  ],
  activate({ host }, scope) {
    const view = scope.add(new CheckpointsView(host));
    scope.add(vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, new CheckpointDocuments(host)));
    scope.add(vscode.window.registerTreeDataProvider(CHECKPOINTS_VIEW_ID, view));
    registerCheckpointCommands(host, view, scope);
    return view;
  },
};
