/**
 * "Vox: Import Sessions…": scans the Claude Code, Codex and Cursor folders (protocol
 * `scanExternalSessions`; the standard locations, honouring CLAUDE_CONFIG_DIR and CODEX_HOME),
 * shows every session found in a multi-select QuickPick (source, project, date, title, size,
 * imported or not; the ones not yet imported are preselected), then imports the chosen ones in
 * batches with a progress notification (`importExternalSessions {ids}` per batch, cancellable
 * between batches) and says what it did.
 */
import * as vscode from 'vscode';
import type { ExtensionContribution } from './contribution';
import type { EngineHost } from './engine-host';
import type { ImportCountsView, ScannedSessionView } from '../protocol/commands/importers';

/** Sessions per import call: the progress notification moves after each batch. */
const IMPORT_BATCH = 10;
const SOURCE_LABEL: Record<ScannedSessionView['source'], string> = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor' };
const SOURCE_ICON: Record<ScannedSessionView['source'], string> = { 'claude-code': '$(sparkle)', codex: '$(terminal)', cursor: '$(edit)' };

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

type Item = vscode.QuickPickItem & { session: ScannedSessionView };

export const importSessionsCommand: ExtensionContribution = {
  name: 'session import',
  commands: ['vox.importSessions'],
  activate({ host, log }, scope) {
    scope.command('vox.importSessions', () => importSessions(host, log), { log });
  },
};

async function importSessions(host: EngineHost, log: vscode.LogOutputChannel): Promise<void> {
  const client = await host.client();
  const scan = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: looking for Claude Code, Codex and Cursor sessions…' }, () => client.call('scanExternalSessions', {}));
  for (const s of scan.sources) if (s.error) log.info(`import: ${SOURCE_LABEL[s.source]}: ${s.error.message}`);
  if (scan.sessions.length === 0) {
    void vscode.window.showInformationMessage(`Vox: no sessions found in ${scan.sources.map((s) => s.dir).join(', ')}.`);
    return;
  }
  const items: Item[] = scan.sessions.map((s) => ({
    label: `${SOURCE_ICON[s.source]} ${s.title}`,
    description: `${SOURCE_LABEL[s.source]}${s.project ? ` · ${s.project}` : ''}`,
    detail: `${new Date(s.date).toLocaleString()} · ${size(s.size)} · ${s.imported === 'yes' ? 'imported' : s.imported === 'partial' ? 'grown since its import' : 'not imported'}`,
    picked: s.imported !== 'yes',
    session: s,
  }));
  const picked = await vscode.window.showQuickPick(items, { canPickMany: true, matchOnDescription: true, matchOnDetail: true, title: 'Vox: Import Sessions', placeHolder: `${scan.sessions.length} sessions found; the ones not imported yet are selected` });
  if (!picked || picked.length === 0) return;
  const ids = picked.map((p) => p.session.id);
  const totals = new Map<string, ImportCountsView>();
  const done = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: importing sessions', cancellable: true }, async (progress, token) => {
    for (let i = 0; i < ids.length; i += IMPORT_BATCH) {
      if (token.isCancellationRequested) return i;
      const batch = ids.slice(i, i + IMPORT_BATCH);
      progress.report({ message: `${i} of ${ids.length}` });
      const r = await client.call('importExternalSessions', { ids: batch });
      for (const c of r.sources) {
        const t = totals.get(c.source);
        if (!t) totals.set(c.source, { ...c, skipped: [...c.skipped] });
        else for (const k of ['sessions', 'files', 'unchangedFiles', 'threads', 'messages', 'toolCalls', 'toolErrors', 'lines'] as const) t[k] += c[k];
      }
      progress.report({ increment: (batch.length / ids.length) * 100, message: `${Math.min(i + batch.length, ids.length)} of ${ids.length}` });
    }
    return ids.length;
  });
  const parts = [...totals.values()].map((c) => `${SOURCE_LABEL[c.source]}: ${c.threads} threads, ${c.messages} messages, ${c.toolCalls} tool calls`);
  const summary = `Vox imported ${done} of ${ids.length} sessions — ${parts.join('; ')}.`;
  log.info(`import: ${summary} ${JSON.stringify([...totals.values()])}`);
  const open = await vscode.window.showInformationMessage(summary, 'Open Chat');
  if (open) await vscode.commands.executeCommand('vox.focusChat');
}
