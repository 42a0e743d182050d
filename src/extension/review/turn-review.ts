/**
 * "Vox: Review Changes": what the agent changed in a turn, file by file and
 * hunk by hunk, with Keep / Undo of each. The files are `listTurnChanges` (the turn's first
 * pre-edit checkpoint against the working tree now); choosing one opens its diff (checkpoint ↔
 * the real file, editable) and a picker of its hunks: Undo one hunk, Undo the whole file, or
 * Keep it. Every undo is a protocol command that saves a restore point first, so the
 * notification after it offers "Undo" (`undoRestore`). Explorer decorations (./decorations.ts)
 * follow what is kept or undone.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EngineClient } from '../../client/engine-client';
import { ClientError } from '../../client/engine-client';
import type { ReviewFileView } from '../../protocol/commands/review';
import { checkpointUri } from '../checkpoint-documents';
import type { EngineHost } from '../engine-host';
import type { ContributionScope } from '../contribution';
import type { ReviewDecorations } from './decorations';

/** Recent threads looked at for one whose last turn changed files. */
const REVIEW_PICK_THREADS = 20;
/** Characters of a hunk's text shown in its picker row. */
const HUNK_ROW_CHARS = 80;

export interface ReviewTarget { threadId: string; runId?: string }

const oneLine = (s: string): string => {
  const t = s.replace(/\r?\n$/, '').replace(/\r?\n/g, ' ⏎ ');
  return t.length > HUNK_ROW_CHARS ? `${t.slice(0, HUNK_ROW_CHARS)}…` : t;
};

async function noTurn<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ClientError && e.is('review', 'noTurn')) return null;
    throw e;
  }
}

/** The thread to review: given, or the most recent thread whose last edit turn has changes (a picker when several). */
async function pickThread(client: EngineClient, arg: unknown): Promise<ReviewTarget | undefined> {
  const a = arg as Partial<ReviewTarget> | undefined;
  if (a && typeof a.threadId === 'string') return { threadId: a.threadId, ...(typeof a.runId === 'string' ? { runId: a.runId } : {}) };
  const { threads } = await client.call('listThreads', { limit: REVIEW_PICK_THREADS });
  const candidates: Array<{ label: string; description: string; threadId: string }> = [];
  for (const t of threads) {
    const c = await noTurn(client.call('listTurnChanges', { threadId: t.id }));
    if (c && c.files.length) candidates.push({ label: t.title, description: `${c.files.length} file${c.files.length === 1 ? '' : 's'} changed`, threadId: t.id });
  }
  if (candidates.length === 0) return void vscode.window.showInformationMessage('Vox: no turn has changed files yet.');
  if (candidates.length === 1) return { threadId: candidates[0]!.threadId };
  const pick = await vscode.window.showQuickPick(candidates, { placeHolder: 'Review the changes of which thread?' });
  return pick ? { threadId: pick.threadId } : undefined;
}

export class TurnReview {
  constructor(private readonly host: EngineHost, private readonly decorations: ReviewDecorations) {}

  /** Opens the diff of one changed file: the turn's baseline ↔ the file on disk. */
  async openDiff(target: ReviewTarget, file: { path: string }): Promise<void> {
    const client = await this.host.client();
    const c = await client.call('listTurnChanges', target);
    const abs = vscode.Uri.file(path.join(c.repoRoot, file.path));
    await vscode.commands.executeCommand('vscode.diff', checkpointUri(file.path, c.baseRef), abs, `${file.path} (before the turn ↔ now)`, { preview: false });
  }

  private async afterUndo(client: EngineClient, what: string, restorePoint: string, target: ReviewTarget): Promise<void> {
    await this.decorations.refresh(target.threadId);
    void vscode.window.showInformationMessage(`Vox: undid ${what}.`, 'Undo').then(async (pick) => {
      if (pick !== 'Undo') return;
      await client.call('undoRestore', { restorePoint });
      await this.decorations.refresh(target.threadId);
    });
  }

  async undoHunk(target: ReviewTarget, filePath: string, hunkIndex: number): Promise<number> {
    const client = await this.host.client();
    const r = await client.call('undoHunk', { ...target, path: filePath, hunkIndex });
    await this.afterUndo(client, `hunk ${hunkIndex + 1} of ${filePath}`, r.restorePoint, target);
    return r.remaining;
  }

  async undoFile(target: ReviewTarget, filePath: string): Promise<void> {
    const client = await this.host.client();
    const r = await client.call('undoFile', { ...target, path: filePath });
    await this.afterUndo(client, `the turn's changes to ${filePath}`, r.restorePoint, target);
  }

  async keep(target: ReviewTarget, filePath?: string): Promise<void> {
    const client = await this.host.client();
    await client.call('keepFile', { ...target, ...(filePath !== undefined ? { path: filePath } : {}) });
    await this.decorations.refresh(target.threadId);
  }

  /** The file picker, then the hunk picker of the chosen file, until dismissed. */
  async run(arg?: unknown): Promise<void> {
    const client = await this.host.client();
    const target = await pickThread(client, arg);
    if (!target) return;
    for (;;) {
      const c = await client.call('listTurnChanges', target);
      const open = c.files.filter((f) => !f.kept);
      type FileItem = vscode.QuickPickItem & { file?: ReviewFileView; action?: 'keepAll' };
      const items: FileItem[] = [
        ...c.files.map((f) => ({
          label: `${f.kept ? '$(check)' : '$(diff)'} ${f.path}`,
          description: `${f.status}${f.binary ? ' · binary' : ` · +${f.additions} −${f.deletions}`}${f.kept ? ' · kept' : ''}`,
          file: f,
        })),
        ...(open.length ? [{ label: '$(check-all) Keep all changes (mark reviewed)', action: 'keepAll' as const }] : []),
      ];
      if (c.files.length === 0) return void vscode.window.showInformationMessage('Vox: nothing left to review in this turn.');
      const pick = await vscode.window.showQuickPick(items, { placeHolder: `Changes of the turn (since checkpoint #${c.baseOrdinal}) — choose a file to review` });
      if (!pick) return;
      if (pick.action === 'keepAll') {
        await this.keep(target);
        continue;
      }
      if (pick.file && !(await this.reviewFile({ ...target, runId: c.runId }, pick.file))) return;
    }
  }

  /** One file: its diff and a picker of hunks. False when the user dismissed the picker. */
  private async reviewFile(target: ReviewTarget, file: ReviewFileView): Promise<boolean> {
    const client = await this.host.client();
    await this.openDiff(target, file);
    for (;;) {
      const h = await client.call('listFileHunks', { ...target, path: file.path });
      type HunkItem = vscode.QuickPickItem & { act: 'hunk' | 'file' | 'keep' | 'back'; index?: number };
      const items: HunkItem[] = [
        ...h.hunks.map((x) => ({
          label: `$(discard) Undo hunk ${x.index + 1}`,
          description: `lines ${x.afterStart + 1}–${Math.max(x.afterStart + 1, x.afterEnd)}`,
          detail: `${x.removed ? `− ${oneLine(x.removed)}  ` : ''}${x.added ? `+ ${oneLine(x.added)}` : ''}`,
          act: 'hunk' as const, index: x.index,
        })),
        { label: '$(discard) Undo the whole file', description: h.existedBefore ? 'back to before the turn' : 'the turn created it: removes it', act: 'file' },
        { label: '$(check) Keep this file', description: 'mark reviewed', act: 'keep' },
        { label: '$(arrow-left) Back to the files', act: 'back' },
      ];
      const pick = await vscode.window.showQuickPick(items, { placeHolder: `${file.path}: ${h.binary ? 'binary file (whole-file undo only)' : `${h.hunks.length} hunk${h.hunks.length === 1 ? '' : 's'}`}` });
      if (!pick) return false;
      if (pick.act === 'back') return true;
      if (pick.act === 'keep') {
        await this.keep(target, file.path);
        return true;
      }
      if (pick.act === 'file') {
        await this.undoFile(target, file.path);
        return true;
      }
      const remaining = await this.undoHunk(target, file.path, pick.index!);
      if (remaining === 0) return true;
    }
  }
}

export function registerTurnReviewCommands(review: TurnReview, decorations: ReviewDecorations, log: vscode.LogOutputChannel, scope: ContributionScope): void {
  const uriPath = (u: unknown): { threadId: string; path: string } | undefined => (u instanceof vscode.Uri ? decorations.ownerOf(u) : undefined);
  scope.command('vox.review.changes', (a) => review.run(a), { log });
  // From the Explorer (decorated files) or with {threadId, path} arguments.
  scope.command('vox.review.keepFile', async (a) => {
    const t = uriPath(a) ?? (a as { threadId: string; path: string });
    if (t?.threadId) await review.keep({ threadId: t.threadId }, t.path);
  }, { log });
  scope.command('vox.review.undoFile', async (a) => {
    const t = uriPath(a) ?? (a as { threadId: string; path: string });
    if (t?.threadId) await review.undoFile({ threadId: t.threadId }, t.path);
  }, { log });
  scope.command('vox.review.undoHunk', async (a) => {
    const t = a as { threadId: string; path: string; hunkIndex: number };
    if (t?.threadId) await review.undoHunk({ threadId: t.threadId }, t.path, t.hunkIndex);
  }, { log });
  scope.command('vox.review.markAllReviewed', () => decorations.markAllReviewed(), { log });
}
