/**
 * "Vox: Import Sessions…": scans the Claude Code, Codex and Cursor folders (protocol
 * `scanExternalSessions`; the standard locations, honouring CLAUDE_CONFIG_DIR and CODEX_HOME),
 * shows every session found in a multi-select QuickPick (source, project, date, title, size,
 * imported or not; the ones not yet imported are preselected), then imports the chosen ones in
 * batches with a progress notification (`importExternalSessions {ids}` per batch, cancellable
 * between batches) and says what it did. The pick always ends with "Choose a folder…" (alone when
 * nothing was found): a folder dialog, its kind read from what it holds or asked, then the same
 * scan and import with that folder (`folders`). The decisions are ./import-folder-choice.ts.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { ExtensionContribution } from './contribution';
import type { EngineHost } from './engine-host';
import type { ImportCountsView, ScannedSessionView } from '../protocol/commands/importers';
import type { EngineClient } from '../client/engine-client';
import {
  afterPick, detectImportKinds, foldersOf, importParams, importPickEntries, importPickPlaceholder,
  type ChosenFolder, type ImportPickEntry, type ImportSourceKind,
} from './import-folder-choice';

/** Sessions per import call: the progress notification moves after each batch. */
const IMPORT_BATCH = 10;
const SOURCE_LABEL: Record<ScannedSessionView['source'], string> = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor' };
const SOURCE_ICON: Record<ScannedSessionView['source'], string> = { 'claude-code': '$(sparkle)', codex: '$(terminal)', cursor: '$(edit)' };

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

type Item = vscode.QuickPickItem & { entry: ImportPickEntry };

export const importSessionsCommand: ExtensionContribution = {
  name: 'session import',
  commands: ['vox.importSessions'],
  activate({ host, log }, scope) {
    scope.command('vox.importSessions', () => importSessions(host, log), { log });
  },
};

/** The folder the user picks in a dialog, read as the kinds it holds (asked when nothing there says). */
async function chooseFolder(): Promise<ChosenFolder | null> {
  const uri = (await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, title: 'Vox: a folder of Claude Code, Codex or Cursor sessions', openLabel: 'Import from here' }))?.[0];
  if (!uri) return null;
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(uri.fsPath);
  } catch {
    // unreadable: the scan says so, typed
  }
  let kinds = detectImportKinds(entries);
  if (kinds.length === 0) {
    const tools: (vscode.QuickPickItem & { tool: ImportSourceKind })[] = (Object.keys(SOURCE_LABEL) as ImportSourceKind[]).map((tool) => ({ label: SOURCE_LABEL[tool], tool }));
    const pick = await vscode.window.showQuickPick(tools, { title: 'Vox: Import Sessions', placeHolder: `Which tool's sessions does ${uri.fsPath} hold?` });
    if (!pick) return null;
    kinds = [pick.tool];
  }
  return { dir: uri.fsPath, kinds };
}

function itemOf(entry: ImportPickEntry): Item {
  if (entry.kind === 'chooseFolder') return { label: '$(folder-opened) Choose a folder…', description: 'Claude Code, Codex or Cursor sessions elsewhere', alwaysShow: true, picked: false, entry };
  const s = entry.session;
  return {
    label: `${SOURCE_ICON[s.source]} ${s.title}`,
    description: `${SOURCE_LABEL[s.source]}${s.project ? ` · ${s.project}` : ''}`,
    detail: `${new Date(s.date).toLocaleString()} · ${size(s.size)} · ${s.imported === 'yes' ? 'imported' : s.imported === 'partial' ? 'grown since its import' : 'not imported'}`,
    picked: s.imported !== 'yes',
    entry,
  };
}

async function importSessions(host: EngineHost, log: vscode.LogOutputChannel): Promise<void> {
  const client = await host.client();
  let chosen: ChosenFolder | null = null;
  for (;;) {
    const params = chosen ? { folders: foldersOf(chosen) } : {};
    const title = chosen ? `Vox: looking for sessions in ${chosen.dir}…` : 'Vox: looking for Claude Code, Codex and Cursor sessions…';
    const scan = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => client.call('scanExternalSessions', params));
    for (const s of scan.sources) if (s.error) log.info(`import: ${SOURCE_LABEL[s.source]}: ${s.error.message}`);
    const items = importPickEntries(scan.sessions).map(itemOf);
    const picked = await vscode.window.showQuickPick(items, { canPickMany: true, matchOnDescription: true, matchOnDetail: true, title: 'Vox: Import Sessions', placeHolder: importPickPlaceholder(scan, chosen?.dir ?? null) });
    if (!picked || picked.length === 0) return;
    const what = afterPick(picked.map((p) => p.entry));
    if (!what.chooseFolder) {
      if (what.ids.length > 0) await importPicked(client, log, chosen, what.ids);
      return;
    }
    if (what.ids.length > 0) await importPicked(client, log, chosen, what.ids);
    const next = await chooseFolder();
    if (!next) return;
    chosen = next;
  }
}

async function importPicked(client: EngineClient, log: vscode.LogOutputChannel, chosen: ChosenFolder | null, ids: string[]): Promise<void> {
  const totals = new Map<string, ImportCountsView>();
  const done = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vox: importing sessions', cancellable: true }, async (progress, token) => {
    for (let i = 0; i < ids.length; i += IMPORT_BATCH) {
      if (token.isCancellationRequested) return i;
      const batch = ids.slice(i, i + IMPORT_BATCH);
      progress.report({ message: `${i} of ${ids.length}` });
      const r = await client.call('importExternalSessions', importParams(chosen, batch));
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
