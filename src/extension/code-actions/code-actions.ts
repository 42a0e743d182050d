/**
 * A code block's Insert at Cursor and Apply to File, done by the extension (the webview posts a
 * `codeAction` message, src/protocol/host.ts).
 * - Insert: the text goes into the active text editor at each cursor (replacing selections),
 *   through `editor.edit`; with the chat focused (a tab in the editor area has no active text
 *   editor) the last text editor that was active and is still visible; none: a clear message.
 * - Apply: the file the block names, or one the user picks (quick pick of the workspace's files,
 *   or a new path); it must be inside the workspace (./target.ts). A diff of the current file
 *   against the proposed content opens (`vscode.diff`, the proposal a read-only `vox-proposed:`
 *   document), and only a confirmation applies it (a WorkspaceEdit, then saved).
 * Failures are CodeActionErrors shown as warnings; anything else is logged with a generic message.
 */
import * as vscode from 'vscode';
import { codeActionMessage, type CodeActionMessage } from '../../protocol/host';
import { isVoxError } from '../../protocol/wire/vox-error';
import { CodeActionError, resolveWorkspaceTarget } from './target';

/** The scheme of the proposed content's read-only documents (the diff's right side). */
export const PROPOSED_SCHEME = 'vox-proposed';
/** Most workspace files the Apply quick pick lists. */
const MAX_PICK_FILES = 2_000;
/** Proposals kept for open diffs (the oldest are dropped). */
const MAX_PROPOSALS = 20;
const EXCLUDE = '{**/node_modules/**,**/.git/**,**/dist/**,**/out/**}';

export class CodeActions implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly proposals = new Map<string, string>();
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private nextProposal = 1;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, { provideTextDocumentContent: (uri) => this.proposals.get(uri.toString()) ?? '' }),
    );
  }

  /** Handles one message from a chat webview; never throws (failures are shown to the user). */
  async handle(raw: unknown): Promise<void> {
    let msg: CodeActionMessage;
    try {
      msg = codeActionMessage(raw);
    } catch (e) {
      this.log.warn(`ignoring a broken codeAction from the webview: ${(e as Error).message}`);
      return;
    }
    try {
      if (msg.action === 'insertAtCursor') await this.insertAtCursor(msg.code);
      else await this.applyToFile(msg.code, msg.path);
    } catch (e) {
      if (isVoxError(e)) {
        void vscode.window.showWarningMessage(e.message);
        return;
      }
      this.log.error(`code block ${msg.action} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      void vscode.window.showErrorMessage(msg.action === 'insertAtCursor' ? 'Vox could not insert the code (see the Vox log).' : 'Vox could not apply the code (see the Vox log).');
    }
  }

  /** The editor Insert acts on: the active one, else the last active one still visible, else the only visible one. */
  private targetEditor(): vscode.TextEditor | undefined {
    const visible = vscode.window.visibleTextEditors;
    const active = vscode.window.activeTextEditor;
    if (active) return active;
    if (this.lastEditor && visible.includes(this.lastEditor)) return this.lastEditor;
    const byDoc = this.lastEditor && visible.find((e) => e.document === this.lastEditor!.document);
    if (byDoc) return byDoc;
    return visible.length === 1 ? visible[0] : undefined;
  }

  async insertAtCursor(code: string): Promise<void> {
    const editor = this.targetEditor();
    if (!editor) throw new CodeActionError('noEditor', 'No editor to insert into: open a file, place the cursor where the code should go, and press Insert again.');
    const ok = await editor.edit((b) => {
      for (const sel of editor.selections) b.replace(sel, code);
    });
    if (!ok) throw new CodeActionError('writeFailed', `${vscode.workspace.asRelativePath(editor.document.uri)} did not take the edit (is it read-only?).`);
  }

  async applyToFile(code: string, requested: string | undefined): Promise<void> {
    const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    if (roots.length === 0) throw new CodeActionError('noWorkspace', 'Open a folder first: Apply to File writes only inside the workspace.');
    const chosen = requested ?? (await this.pickFile());
    if (!chosen) return; // the user cancelled the pick
    const target = resolveWorkspaceTarget(roots, chosen);
    // A fenced block's text has no final newline (markdown drops it); a file gets one.
    code = code.length > 0 && !code.endsWith('\n') ? `${code}\n` : code;
    const uri = vscode.Uri.file(target.abs);
    const proposed = this.propose(target.rel, code);
    const left = target.exists ? uri : this.propose(target.rel, '');
    await vscode.commands.executeCommand('vscode.diff', left, proposed, `${target.rel} ↔ proposed by Vox`, { preview: true });
    const choice = await vscode.window.showInformationMessage(
      `Apply the proposed content to ${target.rel}?`,
      { modal: true, detail: target.exists ? 'The file\'s content is replaced by the code block (undo in its editor).' : 'The file does not exist yet; it is created with the code block.' },
      'Apply',
    );
    if (choice !== 'Apply') return;
    const edit = new vscode.WorkspaceEdit();
    if (target.exists) {
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), code);
    } else {
      edit.createFile(uri, { ignoreIfExists: false });
      edit.insert(uri, new vscode.Position(0, 0), code);
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new CodeActionError('writeFailed', `${target.rel} could not be changed (it may be read-only or open with unsaved changes elsewhere).`);
    const doc = await vscode.workspace.openTextDocument(uri);
    if (!(await doc.save())) throw new CodeActionError('writeFailed', `${target.rel} was changed but could not be saved.`);
    void vscode.window.showInformationMessage(`Applied the code block to ${target.rel}.`);
  }

  /** A read-only document with `content` (the diff's sides). */
  private propose(rel: string, content: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${rel}`, query: String(this.nextProposal++) });
    this.proposals.set(uri.toString(), content);
    while (this.proposals.size > MAX_PROPOSALS) this.proposals.delete(this.proposals.keys().next().value!);
    return uri;
  }

  /** Asks which file: the active editor's first, then the workspace's files, or a new path. */
  private async pickFile(): Promise<string | undefined> {
    const NEW = '$(new-file) New file…';
    const active = this.lastEditor?.document.uri.scheme === 'file' ? vscode.workspace.asRelativePath(this.lastEditor.document.uri, false) : undefined;
    const files = (await vscode.workspace.findFiles('**/*', EXCLUDE, MAX_PICK_FILES)).map((u) => vscode.workspace.asRelativePath(u, false)).sort();
    const items: vscode.QuickPickItem[] = [
      { label: NEW, alwaysShow: true },
      ...(active ? [{ label: active, description: 'active editor' }] : []),
      ...files.filter((f) => f !== active).map((f) => ({ label: f })),
    ];
    const pick = await vscode.window.showQuickPick(items, { title: 'Apply the code block to which file?', placeHolder: 'A workspace file (a diff opens before anything is written)', matchOnDescription: true });
    if (!pick) return undefined;
    if (pick.label !== NEW) return pick.label;
    return vscode.window.showInputBox({ title: 'New file for the code block', prompt: 'A path inside the workspace', placeHolder: 'src/new-file.ts', validateInput: (v) => (v.trim().length === 0 ? 'A path, please' : undefined) });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.proposals.clear();
  }
}
