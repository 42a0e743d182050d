/**
 * `vox checkpoint …` and `vox worktree …`: checkpoints and managed worktrees from scripts and CI,
 * through the protocol. The thread defaults to `cli` (created on first use) so plain scripts need
 * no thread. FROM/TO of `diff` are ordinals of the thread or refs; `working` is the working tree.
 */
import { Option, type Command } from 'commander';
import type { EngineClient } from '../client/engine-client';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

/** Thread used by `vox checkpoint` when `--thread` is not given. */
export const CLI_THREAD_ID = 'cli';
export const RESTORE_MODES = ['files', 'thread', 'both'] as const;

type CpFlags = Flags & { thread?: string; cwd?: string };

function checkpoints<T extends CpFlags>(fn: (client: EngineClient, threadId: string, flags: T) => Promise<void>) {
  return (flags: T) => withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false }, async ({ client }) => {
    await fn(client, flags.thread ?? CLI_THREAD_ID, flags);
    return 0;
  });
}

async function ensureThread(client: EngineClient, threadId: string): Promise<void> {
  await client.call('createThread', { threadId, title: threadId === CLI_THREAD_ID ? 'Checkpoints from the CLI' : threadId });
}

/** An ordinal of the thread becomes its ref; anything else is taken as a ref. */
async function refOf(client: EngineClient, threadId: string, v: string): Promise<string> {
  if (!/^\d+$/.test(v)) return v;
  const { checkpoints: rows } = await client.call('listCheckpoints', { threadId, includeEmpty: true });
  return rows.find((c) => c.ordinal === Number(v))?.ref ?? `refs/vox/checkpoints/unknown/${v}`;
}

const common = (c: Command) => c.option('--thread <id>', 'thread (default: cli)').option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');

export function registerCheckpointCommands(program: Command, run: (p: Promise<number>) => void): void {
  const cp = program.command('checkpoint').description('checkpoints of the workspace in hidden git refs (HEAD, branch, index and stash untouched)');
  common(cp.command('capture').description('capture the workspace now as the thread\'s next checkpoint')).action((o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, threadId, flags) => {
      await ensureThread(client, threadId);
      const r = await client.call('captureCheckpoint', { threadId });
      print(flags, `checkpoint #${r.ordinal} ${r.ref} (${r.changedCount} changed, ${r.skipped.length} skipped, ${r.tookMs} ms)${r.overBudgetMs !== null ? ' [over budget]' : ''}`, r);
    })(o)),
  );
  common(cp.command('list').description('the thread\'s checkpoints, oldest first')).action((o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, threadId, flags) => {
      const rows = (await client.call('listCheckpoints', {})).checkpoints.filter((c) => c.threadId === threadId);
      const what = (c: (typeof rows)[number]) => (c.trigger === 'tool' && c.toolName ? `tool:${c.toolName}` : c.trigger);
      print(flags, rows.map((c) => `#${c.ordinal}\t${new Date(c.createdAt).toISOString()}\t${what(c)}\t${c.changedCount} changed\t${c.ref}`).join('\n') || '(no checkpoints)', rows);
    })(o)),
  );
  common(cp.command('diff').description('per-file changes between two checkpoints (ordinals or refs), or one and the working tree').argument('<from>').argument('[to]', 'a checkpoint, or "working"', 'working')).action(
    (from: string, to: string, o: CpFlags) =>
      run(checkpoints<CpFlags>(async (client, threadId, flags) => {
        const { files } = await client.call('diffCheckpoints', { from: await refOf(client, threadId, from), to: to === 'working' ? 'working' : await refOf(client, threadId, to) });
        print(flags, files.map((f) => `${f.binary ? '-\t-' : `${f.additions}\t${f.deletions}`}\t${f.status}\t${f.path}`).join('\n') || '(no differences)', files);
      })(o)),
  );
  common(cp.command('files').description('the files a checkpoint changed').argument('<ordinal>')).action((ordinal: string, o: CpFlags, cmd: Command) =>
    run(checkpoints<CpFlags>(async (client, threadId, flags) => {
      const r = await client.call('listCheckpointFiles', { threadId, ordinal: ordinalArg(cmd, ordinal) });
      print(flags, r.files.map((f) => `${f.status}\t${f.path}`).join('\n') || '(no files)', r);
    })(o)),
  );
  common(cp.command('show').description('print a file as a checkpoint saw it').argument('<ordinal-or-ref>').argument('<path>')).action((at: string, file: string, o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, threadId, flags) => {
      const r = await client.call('readCheckpointFile', { ref: await refOf(client, threadId, at), path: file });
      if (flags.json) print(flags, '', r);
      else process.stdout.write(Buffer.from(r.dataBase64, 'base64'));
    })(o)),
  );
  common(
    cp.command('restore').description('restore a checkpoint: files (a restore point is saved first), thread, or both').argument('<ordinal>')
      .addOption(new Option('--mode <mode>', 'what to restore').choices(RESTORE_MODES).default('files')),
  ).action((ordinal: string, o: CpFlags & { mode: (typeof RESTORE_MODES)[number] }, cmd: Command) =>
    run(checkpoints<CpFlags & { mode: (typeof RESTORE_MODES)[number] }>(async (client, threadId, flags) => {
      const n = ordinalArg(cmd, ordinal);
      const r = await client.call('restoreCheckpoint', { threadId, ordinal: n, mode: flags.mode });
      print(flags, `restored #${n} (${flags.mode}): ${r.files?.changed.length ?? 0} file(s) changed${r.files ? `; undo with: vox checkpoint undo ${r.files.restorePoint}` : ''}`, r);
    })(o)),
  );
  common(cp.command('orphans').description('deleted threads that still have checkpoint refs (prune them with: vox checkpoint prune --thread <id>)')).action((o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, _t, flags) => {
      const r = await client.call('listOrphanedCheckpoints', {});
      print(flags, r.threads.map((t) => `${t.threadId}\t${t.refs} ref(s)`).join('\n') || '(none)', r);
    })(o)),
  );
  common(cp.command('restore-preview').description('what restoring a checkpoint would delete, overwrite and bring back (changes nothing)').argument('<ordinal>')).action((ordinal: string, o: CpFlags, cmd: Command) =>
    run(checkpoints<CpFlags>(async (client, threadId, flags) => {
      const r = await client.call('previewRestore', { threadId, ordinal: ordinalArg(cmd, ordinal) });
      const owner = new Map<string, string>([
        ...r.deletedBy.thisThread.map((p) => [p.path, 'this thread'] as const),
        ...r.deletedBy.otherThreads.map((p) => [p.path, `thread ${p.threadId} (${p.title})`] as const),
        ...r.deletedBy.handMade.map((p) => [p.path, 'hand-made'] as const),
      ]);
      const lines = [...r.deleted.map((p) => `delete\t${p.path}\t${owner.get(p.path) ?? 'hand-made'}`), ...r.overwritten.map((p) => `overwrite\t${p.path}`), ...r.recreated.map((p) => `bring back\t${p.path}`)];
      print(flags, lines.join('\n') || '(the files already match it)', r);
    })(o)),
  );
  common(cp.command('undo').description('undo a restore (default: the newest restore point)').argument('[restore-point]')).action((point: string | undefined, o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, _t, flags) => {
      const r = await client.call('undoRestore', point ? { restorePoint: point } : {});
      print(flags, `undid ${r.undone}: ${r.files.changed.length} file(s) changed; new restore point ${r.files.restorePoint}`, r);
    })(o)),
  );
  common(cp.command('restore-points').description('restore points, newest first')).action((o: CpFlags) =>
    run(checkpoints<CpFlags>(async (client, _t, flags) => {
      const { restorePoints } = await client.call('listRestorePoints', {});
      print(flags, restorePoints.map((p) => `${new Date(p.timeMs).toISOString()}\t${p.label}\t${p.ref}`).join('\n') || '(no restore points)', restorePoints);
    })(o)),
  );
  common(cp.command('prune').description('delete old checkpoint refs (git\'s gc reclaims the space)').option('--keep-last <n>', 'keep the newest N per thread').option('--older-than-days <d>', 'only checkpoints older than this')).action(
    (o: CpFlags & { keepLast?: string; olderThanDays?: string }, cmd: Command) =>
      run(checkpoints<typeof o>(async (client, _t, flags) => {
        const keepLast = flags.keepLast !== undefined ? countArg(cmd, flags.keepLast, '--keep-last') : undefined;
        const days = flags.olderThanDays !== undefined ? countArg(cmd, flags.olderThanDays, '--older-than-days') : undefined;
        const r = await client.call('pruneCheckpoints', {
          ...(flags.thread ? { threadId: flags.thread } : {}),
          ...(keepLast !== undefined ? { keepLast } : {}),
          ...(days !== undefined ? { olderThanMs: days * 86_400_000, restorePointsOlderThanMs: days * 86_400_000 } : {}),
        });
        print(flags, `deleted ${r.deletedRefs.length} ref(s); ${(r.reclaimableBytes / 1_048_576).toFixed(1)} MB reclaimable by git's gc`, r);
      })(o)),
  );
}

type WtFlags = Flags & { cwd?: string };
const wtCommon = (c: Command) => c.option('--cwd <dir>', 'repository (default: the current directory)').option('--json', 'print JSON');
const worktrees = <T extends WtFlags>(fn: (client: EngineClient, flags: T) => Promise<void>) => (flags: T) =>
  withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false }, async ({ client }) => {
    await fn(client, flags);
    return 0;
  });

export function registerWorktreeCommands(program: Command, run: (p: Promise<number>) => void): void {
  const wt = program.command('worktree').description('managed worktrees under .vox/worktrees (symbolic links never followed on removal)');
  wtCommon(wt.command('create').description('create a worktree (detached, or on a new --branch)').argument('<slug>').option('--base <ref>', 'commit to start from (default HEAD)').option('--branch <name>', 'create this branch')).action(
    (slug: string, o: WtFlags & { base?: string; branch?: string }) =>
      run(worktrees<typeof o>(async (client, flags) => {
        const r = await client.call('createWorktree', { slug, ...(flags.base ? { base: flags.base } : {}), ...(flags.branch ? { branch: flags.branch } : {}) });
        print(flags, `${r.worktree.path}${r.env?.copied.length ? ` (copied ${r.env.copied.join(', ')})` : ''}`, { ...r.worktree, env: r.env });
      })(o)),
  );
  wtCommon(wt.command('list').description('the managed worktrees')).action((o: WtFlags) =>
    run(worktrees<WtFlags>(async (client, flags) => {
      const { worktrees: list } = await client.call('listWorktrees', {});
      print(flags, list.map((w) => `${w.path}\t${w.branch ?? (w.head ? w.head.slice(0, 12) : '(unborn)')}${w.locked ? '\tlocked' : ''}${w.prunable ? '\tprunable' : ''}`).join('\n') || '(no managed worktrees)', list);
    })(o)),
  );
  wtCommon(wt.command('remove').description('remove a managed worktree (refused when it has changes, unless --force)').argument('<path>').option('--force', 'remove even with changes')).action(
    (p: string, o: WtFlags & { force?: boolean }) =>
      run(worktrees<typeof o>(async (client, flags) => {
        const r = await client.call('removeWorktree', { path: p, ...(flags.force ? { force: true } : {}) });
        print(flags, `removed ${r.path}`, r);
      })(o)),
  );
}

function ordinalArg(cmd: Command, v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliUsageError(`the checkpoint ordinal must be a positive number, got ${v}`, cmd);
  return Number(v);
}

function countArg(cmd: Command, v: string, what: string): number {
  if (!/^\d+$/.test(v)) throw new CliUsageError(`${what} must be a whole number, got ${v}`, cmd);
  return Number(v);
}
