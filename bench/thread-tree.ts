/**
 * Benchmark: the conversation tree's engine side at 2,000 and 10,000 messages (every 50th
 * message forks a sibling, so a thread has many branches), on a real SQLite file, through a
 * protocol session as the webview sees it. Baseline, in the same run: `getThread` (the active
 * path only, what a client loads without the tree).
 * Run: `node --import=tsx bench/thread-tree.ts [--samples 15]`. Not a test: no asserts.
 *
 *   getThread      the active path (baseline)
 *   getThreadTree  every message of every branch, the branches and the head, and its JSON size
 *   buildTree      the pure tree + branch ids in memory (src/protocol/branches.ts), what the webview redoes
 *   switchBranch   the head moved to another branch (one IMMEDIATE transaction) and back
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/engine';
import { environmentHost } from '../src/engine/host';
import { VoxStore } from '../src/engine/store/store';
import { STORE_SCHEMAS } from '../src/engine/modules';
import { branchesOf, buildTree } from '../src/protocol/branches';
import { ownerGrant } from '../src/protocol/commands/grants';
import type { VoxEvent } from '../src/protocol/events';
import type { EngineUpdate } from '../src/protocol/updates';
import { seededRandom } from '../test/support/random';

/** Messages per thread measured. */
const SIZES = [2_000, 10_000];
/** Every FORK_EVERY-th message is a sibling of the one before (a branch). */
const FORK_EVERY = 50;
/** Messages appended per transaction while seeding. */
const SEED_BATCH = 500;
/** Untimed runs before the timed ones. */
const WARMUP = 2;
const SEED = 0x7ee;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => void, samples: number): number {
  for (let i = 0; i < WARMUP; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

/** Words of a message body drawn from a fixed vocabulary, so sizes are realistic and reproducible. */
function body(rand: () => number): string {
  const words = ['the', 'test', 'fails', 'because', 'parser', 'returns', 'null', 'fix', 'it', 'in', 'src/a.ts', 'then', 'run', 'npm', 'test'];
  return Array.from({ length: 20 + Math.floor(rand() * 60) }, () => words[Math.floor(rand() * words.length)]).join(' ');
}

function seed(store: VoxStore, threadId: string, n: number, rand: () => number): string[] {
  store.append({ type: 'thread.created', threadId, title: `${n} messages` });
  const leaves: string[] = [];
  let parent: string | null = null;
  let before: string | null = null;
  for (let start = 0; start < n; start += SEED_BATCH) {
    const events: VoxEvent[] = [];
    for (let i = start; i < Math.min(n, start + SEED_BATCH); i++) {
      const id = `msg:${threadId}:${i}`;
      const fork = i % FORK_EVERY === FORK_EVERY - 1;
      events.push({ type: 'message.added', threadId, messageId: id, parentId: fork ? before : parent, role: i % 2 ? 'assistant' : 'user', content: body(rand), runId: null, status: 'complete' });
      if (fork) leaves.push(id);
      else {
        before = parent;
        parent = id;
      }
    }
    store.append(...events);
  }
  return leaves;
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;

async function main(): Promise<void> {
  const samples = arg('samples', 15);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-tree-'));
  const dbPath = path.join(dir, 'vox.db');
  const rand = seededRandom(SEED);
  const seeded = new Map<number, string[]>();
  const store = VoxStore.open(dbPath, { schema: STORE_SCHEMAS });
  for (const n of SIZES) seeded.set(n, seed(store, `thread:tree-${n}`, n, rand));
  store.close();
  const engine = createEngine({ dbPath, workspaceRoot: dir, demoModelPath: path.join(dir, 'none.gguf'), autoCheckpoints: false }, environmentHost({ model: 'local:demo', notify: () => undefined }));
  let last: EngineUpdate | null = null;
  const session = engine.connect((u) => void (last = u), ownerGrant('bench'));
  const call = (cmd: Record<string, unknown>): unknown => {
    last = null;
    session.handle({ requestId: 'b', ...cmd } as never);
    const u = last as EngineUpdate | null;
    if (!u || u.type !== 'result') throw new Error(`${String(cmd.type)}: ${JSON.stringify(u)}`);
    return u.value;
  };
  console.log(`medians of ${samples} samples after ${WARMUP} warm-up runs; a fork every ${FORK_EVERY} messages`);
  console.log(['messages', 'branches', 'getThread (baseline)', 'getThreadTree', 'tree JSON', 'buildTree+branches', 'switchBranch'].join('\t'));
  for (const n of SIZES) {
    const threadId = `thread:tree-${n}`;
    const tree = call({ type: 'getThreadTree', threadId }) as { messages: { id: string; parentId: string | null; createdAt: number }[]; branches: unknown[] };
    const getThread = time(() => call({ type: 'getThread', threadId }), samples);
    const getTree = time(() => call({ type: 'getThreadTree', threadId }), samples);
    const pure = time(() => branchesOf(buildTree(tree.messages)), samples);
    const leaves = seeded.get(n)!;
    let k = 0;
    const sw = time(() => call({ type: 'switchBranch', threadId, toMessageId: leaves[k++ % leaves.length]! }), samples);
    console.log([n, tree.branches.length, fmt(getThread), fmt(getTree), kb(Buffer.byteLength(JSON.stringify(tree))), fmt(pure), fmt(sw)].join('\t'));
  }
  session.dispose();
  await engine.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log('\ngetThreadTree reads every branch (one query, one pass); switchBranch reads the tree again inside its transaction.');
}

void main();
