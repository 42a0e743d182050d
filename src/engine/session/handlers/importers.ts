/** Handlers of the import commands (../../../protocol/commands/importers.ts): the scan and the import (../../importers/service.ts). */
import { ImportService, type ImportDirs } from '../../importers/service';
import type { HandlerTable } from './types';

const counts = (skipped: Record<string, number>) => Object.entries(skipped).map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));

const dirsOf = (cmd: ImportDirs): ImportDirs => ({ claudeDir: cmd.claudeDir, codexDir: cmd.codexDir, cursorDir: cmd.cursorDir, folders: cmd.folders });

export const importerHandlers: HandlerTable<'scanExternalSessions' | 'importExternalSessions'> = {
  scanExternalSessions({ services: { store } }, cmd) {
    const r = new ImportService(store).scan(dirsOf(cmd));
    return { sessions: r.sessions, sources: r.sources.map((s) => ({ ...s, skipped: counts(s.skipped) })) };
  },
  importExternalSessions({ services: { store } }, cmd) {
    const r = new ImportService(store).import(dirsOf(cmd), cmd.ids);
    return { sources: r.sources.map((s) => ({ ...s, skipped: counts(s.skipped) })) };
  },
};
