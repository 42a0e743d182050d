/**
 * What only VS Code knows, for @-mentions (the engine's `MentionSources`, src/engine/host.ts):
 *   - @problems: `vscode.languages.getDiagnostics()`, errors and warnings first, one per line;
 *   - @terminal: the active terminal's recent output, read through the shell integration API
 *     (`onDidStartTerminalShellExecution` → `execution.read()`), kept per terminal in a bounded
 *     buffer from the moment Vox activates (VS Code gives no scrollback of earlier output);
 *   - @selection: the active editor's selection — or the last one's, when the chat in an editor
 *     tab has the focus (workspace-relative path, lines, text).
 * The engine strips escape sequences and applies its limits (src/engine/context/resolve.ts).
 */
import * as vscode from 'vscode';
import type { MentionSources } from '../engine/host';

/** Characters of output kept per terminal (the newest). */
export const TERMINAL_BUFFER_CHARS = 64 * 1024;
/** Most diagnostics listed by @problems. */
export const MAX_PROBLEMS = 500;

const SEVERITY = ['error', 'warning', 'info', 'hint'] as const;

export class VsCodeMentionSources implements MentionSources, vscode.Disposable {
  private readonly output = new Map<vscode.Terminal, string>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The last text editor that had focus: a chat in an editor tab takes the focus from it (activeTextEditor is then undefined). */
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;

  constructor() {
    // Older hosts without the shell integration events simply collect nothing (@terminal then warns).
    const onStart = (vscode.window as Partial<typeof vscode.window>).onDidStartTerminalShellExecution;
    if (onStart) {
      this.disposables.push(onStart((e) => void this.capture(e.terminal, e.execution)));
    }
    this.disposables.push(
      vscode.window.onDidCloseTerminal((t) => this.output.delete(t)),
      vscode.window.onDidChangeActiveTextEditor((ed) => {
        if (ed) this.lastEditor = ed;
      }),
    );
  }

  private append(t: vscode.Terminal, text: string): void {
    const next = (this.output.get(t) ?? '') + text;
    this.output.set(t, next.length > TERMINAL_BUFFER_CHARS ? next.slice(-TERMINAL_BUFFER_CHARS) : next);
  }

  private async capture(t: vscode.Terminal, execution: vscode.TerminalShellExecution): Promise<void> {
    this.append(t, `${this.output.has(t) ? '\n' : ''}$ ${execution.commandLine.value}\n`);
    try {
      for await (const data of execution.read()) this.append(t, data);
    } catch {
      // The terminal went away mid-command: what was read stays.
    }
  }

  async problems(): Promise<string> {
    const rows: Array<{ sev: number; line: string }> = [];
    for (const [uri, diags] of vscode.languages.getDiagnostics()) {
      const file = vscode.workspace.asRelativePath(uri, false);
      for (const d of diags) {
        const where = `${file}:${d.range.start.line + 1}:${d.range.start.character + 1}`;
        const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
        rows.push({ sev: d.severity, line: `${where} ${SEVERITY[d.severity] ?? 'info'}${d.source ? ` ${d.source}` : ''}${code !== undefined ? ` ${code}` : ''}: ${d.message}` });
      }
    }
    rows.sort((a, b) => a.sev - b.sev);
    const shown = rows.slice(0, MAX_PROBLEMS).map((r) => r.line);
    if (rows.length > shown.length) shown.push(`[… ${rows.length - shown.length} more problems not listed]`);
    return shown.join('\n');
  }

  async terminal(): Promise<{ name: string; text: string } | null> {
    const t = vscode.window.activeTerminal ?? [...this.output.keys()].at(-1);
    if (!t) return null;
    const text = this.output.get(t);
    return text ? { name: t.name, text } : null;
  }

  async selection(): Promise<{ path: string; startLine: number; endLine: number; text: string } | null> {
    const ed = vscode.window.activeTextEditor ?? (this.lastEditor && !this.lastEditor.document.isClosed ? this.lastEditor : undefined);
    if (!ed || ed.selection.isEmpty) return null;
    const sel = ed.selection;
    return { path: vscode.workspace.asRelativePath(ed.document.uri, false), startLine: sel.start.line + 1, endLine: sel.end.line + 1, text: ed.document.getText(sel) };
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.output.clear();
  }
}
