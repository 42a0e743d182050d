/**
 * One capturing process for the checkpoint concurrency test: opens the database file, waits at a
 * barrier (it writes `ready-<pid>` beside the `go` file, then polls for `go`), captures a
 * checkpoint of the thread through the CheckpointService, prints `{"ordinal": n}` and exits 0
 * (non-zero with the error on stderr when the capture fails).
 *
 * Usage: node --import tsx test/support/capture-process.ts <db file> <worktree> <thread id> <go file>
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { CheckpointService } from '../../src/engine/checkpoints/service';

/** How often the barrier is polled (ms). */
const BARRIER_POLL_MS = 2;
/** Longest wait at the barrier (ms). */
const BARRIER_TIMEOUT_MS = 60_000;

async function main(): Promise<void> {
  const [dbFile, worktree, threadId, go] = process.argv.slice(2);
  if (!dbFile || !worktree || !threadId || !go) throw new Error('usage: capture-process <db> <worktree> <thread> <go file>');
  const store = VoxStore.open(dbFile, { schema: STORE_SCHEMAS });
  const service = new CheckpointService(store, worktree);
  // Warm up the process (module loading, the helper) before the barrier.
  await service.isRepository();
  fs.writeFileSync(path.join(path.dirname(go), `ready-${process.pid}`), '');
  const started = Date.now();
  while (!fs.existsSync(go)) {
    if (Date.now() - started > BARRIER_TIMEOUT_MS) throw new Error('barrier timeout');
    await new Promise((r) => setTimeout(r, BARRIER_POLL_MS));
  }
  const receipt = await service.capture(threadId, { trigger: 'manual' });
  store.close();
  process.stdout.write(`${JSON.stringify({ ordinal: receipt.ordinal })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
