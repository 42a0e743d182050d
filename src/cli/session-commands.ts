/**
 * `vox session …` (SPEC 6.6): whole-install moves, clients of the bundle commands.
 *   vox session export-bundle FILE [--thread ID]… [--json]   threads (all, or these and their subagents),
 *                                                            rules and checkpoint ref names to one JSON file
 *   vox session import-bundle FILE [--json]                  merge a bundle: no duplicates, all or nothing
 * The group itself (`sessionGroup`, ./import-commands.ts) also holds `vox session import-external`.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import type { BundleExportView, BundleImportView } from '../protocol/commands/bundles';
import { withClient } from './connect';
import { print, type Flags } from './output';

type Cwd = Flags & { cwd?: string };

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function formatExport(v: BundleExportView): string {
  return [
    `wrote ${v.path} (bundle format ${v.version}, ${v.bytes} bytes)`,
    `  ${v.threads} thread(s), ${v.messages} message(s), ${v.runs} run(s), ${v.items} item(s), ${v.events} event(s)`,
    `  rules: ${v.workspaceRules} workspace file(s), ${v.userRules} user rule(s); ${v.checkpointRefs} checkpoint ref name(s)`,
  ].join('\n');
}

export function formatImport(v: BundleImportView): string {
  const lines = [
    `imported ${v.path} (bundle format ${v.version})`,
    `  threads: ${v.threadsAdded} added, ${v.threadsMerged} merged, ${v.threadsUnchanged} unchanged${v.threadsSkipped.length ? `, ${v.threadsSkipped.length} skipped (deleted here: ${v.threadsSkipped.join(', ')})` : ''}`,
    `  ${v.events} event(s) added: ${v.messages} message(s), ${v.runs} run(s)`,
    `  workspace rules: ${v.workspaceRules.added} added, ${v.workspaceRules.unchanged} unchanged${v.workspaceRules.conflicts.length ? `, kept this workspace's ${v.workspaceRules.conflicts.join(', ')} (they differ)` : ''}`,
    `  user rules: ${v.userRules.added} added, ${v.userRules.unchanged} unchanged${v.userRules.conflicts.length ? `, kept yours: ${v.userRules.conflicts.join(', ')}` : ''}${v.userRules.unsupported ? `, ${v.userRules.unsupported} not added (the CLI keeps no user rules: add them to VS Code's vox.rules)` : ''}`,
  ];
  if (v.checkpointRefs > 0) lines.push(`  ${v.checkpointRefs} checkpoint ref name(s) listed (restorable only where the repository has them)`);
  return lines.join('\n');
}

export function registerSessionCommands(session: Command, run: (p: Promise<number>) => void): Command {
  const open = <T>(o: Cwd, reading: boolean, f: Parameters<typeof withClient<T>>[1]) =>
    withClient<T>({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading }, f);
  session.command('export-bundle').description('write threads (all, or --thread and their subagents), rules and checkpoint ref names to one versioned JSON file')
    .argument('<file>', 'the bundle to write (replaced if it exists)')
    .option('--thread <id>', 'export only this thread and its subagent threads (repeatable)', collect)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((file: string, o: Cwd & { thread?: string[] }) => run(open(o, true, async ({ client }) => {
      const v = await client.call('exportBundle', { path: path.resolve(file), ...(o.thread ? { threadIds: o.thread } : {}) });
      print(o, formatExport(v), v);
      return 0;
    })));
  session.command('import-bundle').description('merge a bundle into this install: ids kept, no duplicates, all or nothing; a newer bundle format is refused')
    .argument('<file>', 'the bundle to read')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((file: string, o: Cwd) => run(open(o, false, async ({ client }) => {
      const v = await client.call('importBundle', { path: path.resolve(file) });
      print(o, formatImport(v), v);
      return 0;
    })));
  return session;
}
