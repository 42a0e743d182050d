/**
 * Read-only `vox-review:` documents: the two sides of an edit waiting for approval, as the engine
 * computed them (`previewToolCall`: the file now, and exactly what the tool will write). URI:
 * `vox-review:/<relative path>?call=<callId>&side=before|after`. The text is held here from the
 * preview until the call is settled; a document asked for after that reads as a short notice.
 */
import * as vscode from 'vscode';

export const REVIEW_SCHEME = 'vox-review';
/** Bytes inspected for a NUL to call a side binary (git uses 8000). */
const BINARY_SNIFF_BYTES = 8000;

export type ReviewSide = 'before' | 'after';

export function reviewUri(relPath: string, callId: string, side: ReviewSide): vscode.Uri {
  return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${relPath}`, query: new URLSearchParams({ call: callId, side }).toString() });
}

/** The call a `vox-review:` URI shows, or undefined for any other URI. */
export function callOf(uri: vscode.Uri | undefined): string | undefined {
  if (!uri || uri.scheme !== REVIEW_SCHEME) return undefined;
  return new URLSearchParams(uri.query).get('call') ?? undefined;
}

export function textOf(bytes: Buffer | null): string {
  if (bytes === null) return '';
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return `(binary content, ${bytes.length} bytes)`;
  return bytes.toString('utf8');
}

export class ReviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly sides = new Map<string, { before: string; after: string }>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(callId: string, before: string, after: string): void {
    this.sides.set(callId, { before, after });
  }

  drop(callId: string): void {
    this.sides.delete(callId);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const q = new URLSearchParams(uri.query);
    const s = this.sides.get(q.get('call') ?? '');
    if (!s) return '(this edit is no longer waiting for approval)';
    return q.get('side') === 'before' ? s.before : s.after;
  }

  dispose(): void {
    this.changed.dispose();
    this.sides.clear();
  }
}
