/**
 * The decisions of "Vox: Import Sessions…" that are not VS Code UI (./import-sessions.ts shows
 * them): the QuickPick's entries — the sessions found, then always "Choose a folder…" (alone when
 * the standard places hold nothing) — its placeholder, a chosen folder's kinds read from what it
 * holds (projects/ is Claude Code, sessions/ Codex, chats/ Cursor), what a pick means, and the
 * params of each import call (the chosen folder on every batch, as on its scan).
 */
import type { ImportFolderView, ScannedSessionView } from '../protocol/commands/importers';

export type ImportSourceKind = ScannedSessionView['source'];
export type ImportPickEntry = { kind: 'session'; session: ScannedSessionView } | { kind: 'chooseFolder' };
/** A folder the user chose, and the kinds of sessions it is read as. */
export interface ChosenFolder { dir: string; kinds: ImportSourceKind[] }

/** The entry each kind's home holds: how a chosen folder's kind is recognised. */
export const KIND_MARKERS: readonly { entry: string; kind: ImportSourceKind }[] = [
  { entry: 'projects', kind: 'claude-code' },
  { entry: 'sessions', kind: 'codex' },
  { entry: 'chats', kind: 'cursor' },
];

export function importPickEntries(sessions: readonly ScannedSessionView[]): ImportPickEntry[] {
  return [...sessions.map((session): ImportPickEntry => ({ kind: 'session', session })), { kind: 'chooseFolder' }];
}

export function importPickPlaceholder(scan: { sessions: readonly ScannedSessionView[]; sources: readonly { dir: string }[] }, chosen: string | null): string {
  const where = chosen ?? scan.sources.map((s) => s.dir).join(', ');
  if (scan.sessions.length === 0) return `No sessions found in ${where}: choose a folder that holds them`;
  const n = scan.sessions.length;
  return `${n} session${n === 1 ? '' : 's'} found in ${where}; the ones not imported yet are selected`;
}

/** The kinds a folder holding `entries` (its names) is home to; none recognised: ask the user. */
export function detectImportKinds(entries: readonly string[]): ImportSourceKind[] {
  const names = new Set(entries);
  return KIND_MARKERS.filter((m) => names.has(m.entry)).map((m) => m.kind);
}

/** What a pick asks for: the folder flow (when "Choose a folder…" is among it) and the sessions picked. */
export function afterPick(picked: readonly ImportPickEntry[]): { chooseFolder: boolean; ids: string[] } {
  return {
    chooseFolder: picked.some((p) => p.kind === 'chooseFolder'),
    ids: picked.flatMap((p) => (p.kind === 'session' ? [p.session.id] : [])),
  };
}

/** The folders of a chosen folder, as `scanExternalSessions` / `importExternalSessions` take them. */
export function foldersOf(chosen: ChosenFolder): ImportFolderView[] {
  return chosen.kinds.map((source) => ({ source, dir: chosen.dir }));
}

/** One import call's params: the ids, and the chosen folder when the sessions came from one. */
export function importParams(chosen: ChosenFolder | null, ids: string[]): { ids: string[]; folders?: ImportFolderView[] } {
  return chosen ? { ids, folders: foldersOf(chosen) } : { ids };
}
