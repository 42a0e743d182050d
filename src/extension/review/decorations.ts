/**
 * Explorer decorations for the files the agent changed and the user has not reviewed yet
 *: badge "V", a tooltip naming the thread, until the file is kept, undone or
 * "Mark All Reviewed". Fed by `listTurnChanges` of a thread whenever one of its runs ends or it
 * is checkpointed or restored (`watchThreads`), and after every Keep / Undo. It attaches when the
 * engine starts and never starts it itself.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ClientError, type EngineClient } from '../../client/engine-client';
import type { EngineHost } from '../engine-host';

/** The badge (at most two characters in VS Code). */
export const REVIEW_BADGE = 'V';
/** Context key: the absolute paths decorated now (`resourcePath in …` in package.json menus). */
const CHANGED_FILES_CONTEXT = 'vox.review.changedFiles';

export class ReviewDecorations implements vscode.FileDecorationProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri[] | undefined>();
  readonly onDidChangeFileDecorations = this.changed.event;
  /** thread → absolute path → the thread's title. */
  private readonly byThread = new Map<string, Map<string, { title: string; rel: string }>>();
  private readonly disposables: vscode.Disposable[] = [];
  private stop: (() => void) | undefined;

  constructor(private readonly host: EngineHost) {
    this.disposables.push(host.onDidStart(() => void this.attach()));
  }

  private async attach(): Promise<void> {
    const client = await this.host.client();
    this.stop?.();
    this.stop = client.on('threadChanged', (u) => {
      if (u.eventType === 'run.ended' || u.eventType.startsWith('checkpoint.') || u.eventType === 'thread.deleted') void this.refresh(u.threadId).catch(() => undefined);
    });
    await client.call('watchThreads', {});
  }

  /** Unreviewed changed files (absolute paths), for tests. */
  get files(): string[] {
    return [...new Set([...this.byThread.values()].flatMap((m) => [...m.keys()]))].sort();
  }

  /** The thread and repository-relative path of a decorated file. */
  ownerOf(uri: vscode.Uri): { threadId: string; path: string } | undefined {
    for (const [threadId, m] of this.byThread) {
      const f = m.get(uri.fsPath);
      if (f) return { threadId, path: f.rel };
    }
    return undefined;
  }

  async refresh(threadId: string): Promise<void> {
    const client = await this.host.client();
    const old = [...(this.byThread.get(threadId)?.keys() ?? [])];
    const next = await this.unreviewed(client, threadId);
    if (next.size) this.byThread.set(threadId, next);
    else this.byThread.delete(threadId);
    this.changed.fire([...new Set([...old, ...next.keys()])].map((p) => vscode.Uri.file(p)));
    // The Explorer's Keep / Undo items show on these files only.
    void vscode.commands.executeCommand('setContext', CHANGED_FILES_CONTEXT, this.files);
  }

  private async unreviewed(client: EngineClient, threadId: string): Promise<Map<string, { title: string; rel: string }>> {
    const out = new Map<string, { title: string; rel: string }>();
    let title = threadId;
    try {
      title = (await client.call('getThread', { threadId })).thread.title;
      const c = await client.call('listTurnChanges', { threadId });
      for (const f of c.files) if (!f.kept && f.status !== 'deleted') out.set(path.join(c.repoRoot, f.path), { title, rel: f.path });
    } catch (e) {
      // A thread with no edit turn, or one that is gone: nothing to decorate.
      if (!(e instanceof ClientError)) throw e;
    }
    return out;
  }

  async markAllReviewed(): Promise<void> {
    const client = await this.host.client();
    for (const threadId of [...this.byThread.keys()]) {
      await client.call('keepFile', { threadId }).catch(() => undefined);
      await this.refresh(threadId);
    }
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    for (const m of this.byThread.values()) {
      const f = m.get(uri.fsPath);
      if (f) {
        const d = new vscode.FileDecoration(REVIEW_BADGE, `Changed by Vox ("${f.title}") — not reviewed yet. Vox: Review Changes to keep or undo.`, new vscode.ThemeColor('gitDecoration.modifiedResourceForeground'));
        d.propagate = false;
        return d;
      }
    }
    return undefined;
  }

  dispose(): void {
    this.stop?.();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
