/**
 * One restoring process for the interrupted-restore test: restores checkpoint <ordinal> of
 * <thread> in <worktree> through the checkpoint store and, once <n> files are written, stops
 * before the next one — it writes <marker> and blocks for good, so the test kills it (-9) right
 * there. Nothing here is timed: the test waits for the marker.
 *
 * Usage: node --import tsx test/support/restore-process.ts <worktree> <thread> <ordinal> <n> <marker>
 */
import * as fs from 'node:fs';
import { GitPlumbingCheckpointStore } from '../../src/engine/checkpoints/git-checkpoints';
import { restoreFaults } from '../../src/engine/checkpoints/restore-writer';

async function main(): Promise<void> {
  const [worktree, threadId, ordinal, n, marker] = process.argv.slice(2);
  if (!worktree || !threadId || !ordinal || n === undefined || !marker) throw new Error('usage: restore-process <worktree> <thread> <ordinal> <n> <marker>');
  let written = 0;
  restoreFaults.beforeWrite = () => {
    if (written++ < Number(n)) return;
    fs.writeFileSync(marker, String(written - 1));
    // Block this thread (no event loop, no timer): the test kills the process here.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  };
  await new GitPlumbingCheckpointStore().restoreCheckpoint({ worktree, threadId, ordinal: Number(ordinal), mode: 'files' });
  fs.writeFileSync(marker, 'finished');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
