/**
 * Read-only `vox-checkpoint:` documents: the content of a file as a checkpoint (or any git ref)
 * saw it, for `vscode.diff` / `vscode.changes`. URI: `vox-checkpoint:/<relative path>?<ref>`.
 * A file absent at that checkpoint reads as empty (the diff then shows it as added/deleted).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EngineHost } from './engine-host';
import type { FileDiffStat } from '../engine/checkpoints/git-checkpoints';

export const CHECKPOINT_SCHEME = 'vox-checkpoint';

export function checkpointUri(relPath: string, ref: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${relPath}`, query: ref });
}

export class CheckpointDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: EngineHost) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const engine = await this.host.get();
    const rel = uri.path.replace(/^\//, '');
    try {
      const buf = await engine.checkpoints.readFile(uri.query, rel);
      if (buf.subarray(0, 8000).includes(0)) return `(binary file, ${buf.length} bytes)`;
      return buf.toString('utf8');
    } catch (e) {
      if ((e as { code?: string }).code === 'pathNotFound') return '';
      throw e;
    }
  }
}

/** Opens a multi-file diff (or a single diff) between two refs, or a ref and the working tree. */
export async function openCheckpointDiff(host: EngineHost, title: string, fromRef: string, toRef: string | 'working', onlyFile?: string): Promise<void> {
  const engine = await host.get();
  const root = engine.workspaceRoot;
  let files: FileDiffStat[] = await engine.checkpoints.diff(fromRef, toRef);
  if (onlyFile) files = files.filter((f) => f.path === onlyFile);
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`Vox: no differences (${title}).`);
    return;
  }
  const right = (rel: string) => (toRef === 'working' ? vscode.Uri.file(path.join(root, rel)) : checkpointUri(rel, toRef));
  if (files.length === 1) {
    const f = files[0]!;
    await vscode.commands.executeCommand('vscode.diff', checkpointUri(f.from?.path ?? f.path, fromRef), right(f.path), `${f.path} (${title})`);
    return;
  }
  const resources = files.map((f) => [vscode.Uri.file(path.join(root, f.path)), checkpointUri(f.from?.path ?? f.path, fromRef), right(f.path)]);
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}
