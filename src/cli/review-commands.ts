/**
 * `vox review …`: the agent's changes in a thread's latest edit turn (or `--run`), per file and
 * per hunk, with Keep / Undo, through the review protocol commands; and `vox checkpoint
 * restore-preview <ordinal>` (what a restore would delete and overwrite). Every undo prints the
 * restore point that takes it back (`vox checkpoint undo <ref>`).
 */
import type { Command } from 'commander';
import type { EngineClient } from '../client/engine-client';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

type ReviewFlags = Flags & { cwd?: string; run?: string };

function review<T extends ReviewFlags>(fn: (client: EngineClient, flags: T) => Promise<void>) {
  return (flags: T) => withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false }, async ({ client }) => {
    await fn(client, flags);
    return 0;
  });
}

const common = (c: Command) => c.option('--run <runId>', 'the turn (default: the thread\'s latest turn that edited files)').option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');
const turnOf = (threadId: string, flags: ReviewFlags) => ({ threadId, ...(flags.run ? { runId: flags.run } : {}) });

export function registerReviewCommands(program: Command, run: (p: Promise<number>) => void): void {
  const rv = program.command('review').description('review what the agent changed in a turn: files, hunks, keep or undo (every undo is undoable)');
  common(rv.command('files').description('files changed since the turn\'s first edit').argument('<threadId>')).action((threadId: string, o: ReviewFlags) =>
    run(review<ReviewFlags>(async (client, flags) => {
      const r = await client.call('listTurnChanges', turnOf(threadId, flags));
      print(flags, r.files.map((f) => `${f.status}\t+${f.additions} -${f.deletions}${f.binary ? ' binary' : ''}${f.kept ? '\tkept' : ''}\t${f.path}`).join('\n') || '(no changes)', r);
    })(o)),
  );
  common(rv.command('hunks').description('one file\'s hunks against the turn\'s baseline').argument('<threadId>').argument('<path>')).action((threadId: string, path: string, o: ReviewFlags) =>
    run(review<ReviewFlags>(async (client, flags) => {
      const r = await client.call('listFileHunks', { ...turnOf(threadId, flags), path });
      const text = r.binary ? `${path} is binary: undo it whole (vox review undo-file)` : r.hunks.map((h) => `hunk ${h.index}: lines ${h.afterStart + 1}-${h.afterEnd}\n${h.removed.replace(/^/gm, '-')}\n${h.added.replace(/^/gm, '+')}`).join('\n') || '(no hunks)';
      print(flags, text, r);
    })(o)),
  );
  common(rv.command('undo-hunk').description('put one hunk back as it was before the turn').argument('<threadId>').argument('<path>').argument('<hunk>', 'hunk index (from `vox review hunks`)')).action(
    (threadId: string, path: string, hunk: string, o: ReviewFlags, cmd: Command) =>
      run(review<ReviewFlags>(async (client, flags) => {
        if (!/^\d+$/.test(hunk)) throw new CliUsageError(`the hunk index must be a whole number, got ${hunk}`, cmd);
        const r = await client.call('undoHunk', { ...turnOf(threadId, flags), path, hunkIndex: Number(hunk) });
        print(flags, `undid hunk ${hunk} of ${path} (${r.remaining} left); take it back with: vox checkpoint undo ${r.restorePoint}`, r);
      })(o)),
  );
  common(rv.command('undo-file').description('put a whole file back as it was before the turn').argument('<threadId>').argument('<path>')).action((threadId: string, path: string, o: ReviewFlags) =>
    run(review<ReviewFlags>(async (client, flags) => {
      const r = await client.call('undoFile', { ...turnOf(threadId, flags), path });
      print(flags, `undid the turn's changes to ${path}; take it back with: vox checkpoint undo ${r.restorePoint}`, r);
    })(o)),
  );
  common(rv.command('keep').description('mark a file (or every changed file) reviewed').argument('<threadId>').argument('[path]')).action((threadId: string, path: string | undefined, o: ReviewFlags) =>
    run(review<ReviewFlags>(async (client, flags) => {
      const r = await client.call('keepFile', { ...turnOf(threadId, flags), ...(path ? { path } : {}) });
      print(flags, `kept ${r.kept.length} file(s)`, r);
    })(o)),
  );
}
