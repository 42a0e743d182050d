/**
 * `vox checkpoint …` and `vox worktree …`: checkpoints and managed worktrees from scripts and CI.
 *   vox checkpoint capture [--thread T] [--cwd D] [--json]
 *   vox checkpoint list    [--thread T] [--cwd D] [--json]
 *   vox checkpoint diff FROM [TO|working] [--thread T] [--cwd D] [--json]   (FROM/TO: ordinals or refs)
 *   vox checkpoint restore ORDINAL [--thread T] [--mode files|thread|both] [--cwd D] [--json]
 *   vox checkpoint undo [RESTORE_POINT_REF] [--cwd D] [--json]               (default: the newest)
 *   vox worktree create SLUG [--base REF] [--branch NAME] [--cwd D] [--json]
 *   vox worktree list [--cwd D] [--json]
 *   vox worktree remove PATH [--force] [--cwd D] [--json]
 * The thread defaults to `cli` (created on first use) so plain scripts need no thread.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../engine/engine';
import { createManagedWorktree, listManagedWorktrees, removeManagedWorktree } from '../engine/worktrees/worktrees';
import type { RestoreMode } from '../engine/checkpoints/service';
import { parseArgs, UsageError } from './args';

/** Thread used by `vox checkpoint` when `--thread` is not given. */
export const CLI_THREAD_ID = 'cli';
const MODES: readonly RestoreMode[] = ['files', 'thread', 'both'];

type Out = (human: string, json: unknown) => void;

function out(flags: Record<string, string | boolean>): Out {
  return (human, json) => process.stdout.write(flags.json ? JSON.stringify(json, (_k, v: unknown) => (Buffer.isBuffer(v) ? undefined : v), 2) + '\n' : human + '\n');
}

function ensureThread(engine: Engine, threadId: string): void {
  try {
    engine.store.getThread(threadId);
  } catch {
    engine.store.append({ type: 'thread.created', threadId, title: threadId === CLI_THREAD_ID ? 'Checkpoints from the CLI' : threadId });
  }
}

function ordinalArg(v: string | undefined, what: string): number {
  if (v === undefined || !/^\d+$/.test(v)) throw new UsageError(`${what} must be a checkpoint ordinal (a number), got ${v ?? 'nothing'}`);
  return Number(v);
}

export async function runCheckpointCommand(argv: string[], open: (cwd: string) => Engine): Promise<number> {
  const [sub, ...rest] = argv;
  const { positional, flags } = parseArgs(rest, { thread: 'string', cwd: 'string', json: 'boolean', mode: 'string' });
  const engine = open(String(flags.cwd ?? process.cwd()));
  const say = out(flags);
  const threadId = String(flags.thread ?? CLI_THREAD_ID);
  const refOf = (v: string) => (/^\d+$/.test(v) ? engine.store.checkpoints(threadId).find((c) => c.ordinal === Number(v))?.ref ?? `refs/vox/checkpoints/unknown/${v}` : v);
  try {
    if (sub === 'capture') {
      ensureThread(engine, threadId);
      const r = await engine.checkpoints.capture(threadId, { trigger: 'manual' });
      say(`checkpoint #${r.ordinal} ${r.ref} (${r.changedCount} changed, ${r.skipped.length} skipped, ${Math.round(r.tookMs)} ms)${r.overBudget ? ' [over budget]' : ''}`, r);
      return 0;
    }
    if (sub === 'list') {
      const rows = engine.store.checkpoints(threadId);
      const infos = rows.length > 0 ? await engine.checkpoints.list(threadId) : [];
      say(infos.map((c) => `#${c.ordinal}\t${new Date(c.timeMs).toISOString()}\t${c.trigger.kind}${c.trigger.kind === 'tool' && c.trigger.toolName ? `:${c.trigger.toolName}` : ''}\t${c.changedCount} changed\t${c.ref}`).join('\n') || '(no checkpoints)', infos);
      return 0;
    }
    if (sub === 'diff') {
      const [from, to = 'working'] = positional;
      if (!from) throw new UsageError('vox checkpoint diff needs FROM (an ordinal or a ref)');
      const stats = await engine.checkpoints.diff(refOf(from), to === 'working' ? 'working' : refOf(to));
      say(stats.map((f) => `${f.binary ? '-\t-' : `${f.additions}\t${f.deletions}`}\t${f.status}\t${f.path}`).join('\n') || '(no differences)', stats);
      return 0;
    }
    if (sub === 'restore') {
      const ordinal = ordinalArg(positional[0], 'restore ORDINAL');
      const mode = String(flags.mode ?? 'files') as RestoreMode;
      if (!MODES.includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
      const r = await engine.checkpoints.restore(threadId, ordinal, mode);
      say(`restored #${ordinal} (${mode}): ${r.files?.changed.length ?? 0} file(s) changed${r.files ? `; undo with: vox checkpoint undo ${r.files.restorePoint}` : ''}`, r);
      return 0;
    }
    if (sub === 'undo') {
      let point = positional[0];
      if (!point) {
        const points = await engine.checkpoints.git.listRestorePoints(engine.workspaceRoot);
        point = points.sort((a, b) => b.timeMs - a.timeMs)[0]?.ref;
        if (!point) throw new UsageError('there is no restore point to undo');
      }
      const r = await engine.checkpoints.undo(point);
      say(`undid ${point}: ${r.changed.length} file(s) changed; new restore point ${r.restorePoint}`, r);
      return 0;
    }
    throw new UsageError('vox checkpoint needs capture, list, diff, restore or undo');
  } finally {
    await engine.dispose();
  }
}

export async function runWorktreeCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { positional, flags } = parseArgs(rest, { cwd: 'string', json: 'boolean', base: 'string', branch: 'string', force: 'boolean' });
  const cwd = fs.realpathSync(String(flags.cwd ?? process.cwd()));
  const say = out(flags);
  if (sub === 'create') {
    const slug = positional[0];
    if (!slug) throw new UsageError('vox worktree create needs a SLUG');
    const wt = await createManagedWorktree({ repoRoot: cwd, slug, ...(flags.base ? { baseRef: String(flags.base) } : {}), ...(flags.branch ? { branch: String(flags.branch), detach: false } : {}) });
    say(`${wt.path}${wt.env?.copied.length ? ` (copied ${wt.env.copied.join(', ')})` : ''}`, wt);
    return 0;
  }
  if (sub === 'list') {
    const list = await listManagedWorktrees(cwd);
    say(list.map((w) => `${w.path}\t${w.branch ?? (w.head ? w.head.slice(0, 12) : '(unborn)')}${w.locked ? '\tlocked' : ''}${w.prunable ? '\tprunable' : ''}`).join('\n') || '(no managed worktrees)', list);
    return 0;
  }
  if (sub === 'remove') {
    const p = positional[0];
    if (!p) throw new UsageError('vox worktree remove needs a PATH');
    const r = await removeManagedWorktree({ repoRoot: cwd, path: path.resolve(cwd, p), force: !!flags.force });
    say(`removed ${r.path}`, r);
    return 0;
  }
  throw new UsageError('vox worktree needs create, list or remove');
}
