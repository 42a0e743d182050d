/** Handlers of the import commands (../../../protocol/commands/importers.ts): the scan and the import (../../importers/service.ts). */
import { ImportService } from '../../importers/service';
import type { HandlerTable } from './types';

const counts = (skipped: Record<string, number>) => Object.entries(skipped).map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));

export const importerHandlers: HandlerTable<'scanExternalSessions' | 'importExternalSessions'> = {
  scanExternalSessions({ services: { store } }, cmd) {
    const r = new ImportService(store).scan({ claudeDir: cmd.claudeDir, codexDir: cmd.codexDir, cursorDir: cmd.cursorDir });
    return { sessions: r.sessions, sources: r.sources.map((s) => ({ ...s, skipped: counts(s.skipped) })) };
  },
  importExternalSessions({ services: { store } }, cmd) {
    const r = new ImportService(store).import({ claudeDir: cmd.claudeDir, codexDir: cmd.codexDir, cursorDir: cmd.cursorDir }, cmd.ids);
    return { sources: r.sources.map((s) => ({ ...s, skipped: counts(s.skipped) })) };
  },
};
