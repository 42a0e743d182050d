/**
 * `vox session import-external [--claude DIR]… [--codex DIR]… [--cursor DIR]… [--scan] [--json]`:
 * imports Claude Code, Codex and Cursor sessions as Vox threads (protocol `scanExternalSessions`
 * / `importExternalSessions`, SPEC 6.6). Each DIR is the tool's home as its own variables name it:
 * a Claude config dir holding projects/ (CLAUDE_CONFIG_DIR), a Codex home holding sessions/
 * (CODEX_HOME), a Cursor dir holding chats/; each flag may be repeated (every folder imported, the
 * same one once, counts per folder); without any, the standard locations. Importing again
 * changes nothing; a grown session imports only what is new. A folder given but missing is a
 * typed error (`ImportError (missingDir)`, exit 1), checked for every folder before any is imported.
 */
import type { Command } from 'commander';
import type { ImportCountsView, ImportFolderView } from '../protocol/commands/importers';
import { withClient } from './connect';
import { print, type Flags } from './output';

type ImportFlags = Flags & { claude?: string[]; codex?: string[]; cursor?: string[]; scan?: boolean; cwd?: string };

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The `vox session` group (created here when no other module made it yet). */
export function sessionGroup(program: Command): Command {
  return program.commands.find((c) => c.name() === 'session') ?? program.command('session').description('sessions: import from other agents, export and import bundles');
}

const skippedText = (s: { reason: string; count: number }[]) => (s.length === 0 ? 'none' : s.map((x) => `${x.reason} ${x.count}`).join(', '));

function countsLine(c: ImportCountsView): string {
  return `${c.source} (${c.dir}): ${c.sessions} sessions (${c.files} files, ${c.unchangedFiles} unchanged), ${c.threads} threads, ${c.messages} messages, ${c.toolCalls} tool calls (${c.toolErrors} failed); skipped: ${skippedText(c.skipped)}`;
}

export function registerImportCommands(session: Command, run: (p: Promise<number>) => void): void {
  session.command('import-external')
    .description('import Claude Code, Codex and Cursor sessions as Vox threads (again: only what is new)')
    .option('--claude <dir>', 'Claude Code config dir holding projects/ (repeatable; default $CLAUDE_CONFIG_DIR or ~/.claude)', collect)
    .option('--codex <dir>', 'Codex home holding sessions/ (repeatable; default $CODEX_HOME or ~/.codex)', collect)
    .option('--cursor <dir>', 'Cursor dir holding chats/ (repeatable; default ~/.cursor)', collect)
    .option('--scan', 'only list what was found (source, project, date, title, size, imported or not)')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((flags: ImportFlags) => {
      const folders: ImportFolderView[] = [
        ...(flags.claude ?? []).map((dir) => ({ source: 'claude-code' as const, dir })),
        ...(flags.codex ?? []).map((dir) => ({ source: 'codex' as const, dir })),
        ...(flags.cursor ?? []).map((dir) => ({ source: 'cursor' as const, dir })),
      ];
      const dirs = folders.length > 0 ? { folders } : {};
      run(withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false }, async ({ client }) => {
        if (flags.scan) {
          const r = await client.call('scanExternalSessions', dirs);
          const lines = r.sessions.map((s) => `${s.imported === 'yes' ? '✓' : s.imported === 'partial' ? '~' : ' '} ${s.source}\t${new Date(s.date).toISOString().slice(0, 16)}\t${s.project ?? '-'}\t${s.title}\t${s.size} B`);
          for (const s of r.sources) if (s.error) lines.push(`${s.source}: ${s.error.message}`);
          print(flags, lines.join('\n') || '(no sessions found)', r);
          return 0;
        }
        const r = await client.call('importExternalSessions', dirs);
        print(flags, r.sources.map(countsLine).join('\n') || '(no source folder found)', r);
        return 0;
      }));
    });
}
