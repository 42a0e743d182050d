/**
 * Read-only `vox-checkpoint:` documents: the content of a file as a checkpoint (or any git ref)
 * saw it, for `vscode.diff` / `vscode.changes`. URI: `vox-checkpoint:/<relative path>?<ref>`.
 * A file absent at that checkpoint reads as empty (the diff then shows it as added/deleted).
 * Content and diffs come through the protocol (`readCheckpointFile`, `diffCheckpoints`).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ClientError } from '../client/engine-client';
import type { FileDiffView } from '../protocol/commands/checkpoints';
import type { EngineHost } from './engine-host';

export const CHECKPOINT_SCHEME = 'vox-checkpoint';
/** Bytes inspected for a NUL to call a file binary (git uses 8000). */
const BINARY_SNIFF_BYTES = 8000;

export function checkpointUri(relPath: string, ref: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${relPath}`, query: ref });
}

export class CheckpointDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: EngineHost) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const client = await this.host.client();
    const rel = uri.path.replace(/^\//, '');
    try {
      const r = await client.call('readCheckpointFile', { ref: uri.query, path: rel });
      const buf = Buffer.from(r.dataBase64, 'base64');
      if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return `(binary file, ${buf.length} bytes)`;
      return buf.toString('utf8');
    } catch (e) {
      if (e instanceof ClientError && e.is('checkpoint', 'pathNotFound')) return '';
      throw e;
    }
  }
}

/** Opens a multi-file diff (or a single diff) between two refs, or a ref and the working tree. */
export async function openCheckpointDiff(host: EngineHost, title: string, fromRef: string, toRef: string | 'working', onlyFile?: string): Promise<void> {
  const client = await host.client();
  const root = (await host.get()).workspaceRoot;
  let { files } = await client.call('diffCheckpoints', { from: fromRef, to: toRef });
  if (onlyFile) files = files.filter((f: FileDiffView) => f.path === onlyFile);
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
