/**
 * Registers a palette/tree command whose failures become an error notification (and a log line)
 * instead of an unhandled rejection; `after` runs whatever happened (e.g. refresh a view).
 */
import * as vscode from 'vscode';

export function guardedCommand(id: string, fn: (...args: unknown[]) => unknown, opts: { log?: vscode.LogOutputChannel; after?: () => void } = {}): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    try {
      return await fn(...args);
    } catch (e) {
      opts.log?.error(`${id}: ${(e as Error).message}`);
      void vscode.window.showErrorMessage(`Vox: ${(e as Error).message}`);
    } finally {
      opts.after?.();
    }
  });
}
