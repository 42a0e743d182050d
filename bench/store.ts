/**
 * Benchmark: what opening a thread and listing threads cost as the database grows (10 → 10,000
 * threads, THREAD_EVENTS events each), on a real SQLite file. Baseline, in the same run: the way
 * main did it before the engine's step 2 — a thread subscription replayed the whole event log
 * from seq 0 and filtered it in JavaScript, and the thread list sent every thread at once.
 * Run: `node --import=tsx bench/store.ts [--max 10000] [--samples 40]`. Not a test: no asserts.
 *
 *   subscribe      VoxStore.subscribeThread(thread, 0): that thread's rows only (events_by_thread)
 *   subscribe/log  baseline: VoxStore.subscribe(0) + filter by thread (the whole log)
 *   open (proto)   a protocol session: subscribeThread → its `events` update (what the webview waits for)
 *   list page      listThreadsPage(50): the first page, and its JSON size
 *   list all       baseline: listThreads(), every thread, and its JSON size
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/engine';
import { environmentHost } from '../src/engine/host';
import { VoxStore } from '../src/engine/store/store';
import { STORE_SCHEMAS } from '../src/engine/modules';
import { ownerGrant } from '../src/protocol/commands/grants';
import { DEFAULT_THREAD_PAGE } from '../src/protocol/commands/threads';
import type { EngineUpdate } from '../src/protocol/updates';
import type { VoxEvent } from '../src/protocol/events';
import { seededRandom } from '../test/support/random';

/** Thread counts measured, smallest first. */
const COUNTS = [10, 100, 1_000, 10_000];
/** Events per thread: created, a user message, an assistant message. */
const THREAD_EVENTS = 3;
/** Threads appended per transaction while seeding. */
const SEED_BATCH = 500;
const SEED = 0x5eed;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => void, samples: number): number {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

function seedThreads(store: VoxStore, from: number, to: number): void {
  for (let start = from; start < to; start += SEED_BATCH) {
    const events: VoxEvent[] = [];
    for (let i = start; i < Math.min(to, start + SEED_BATCH); i++) {
      const threadId = `thread:bench-${i}`;
      events.push(
        { type: 'thread.created', threadId, title: `Thread ${i}: fix the failing test in module ${i % 97}` },
        { type: 'message.added', threadId, messageId: `msg:${i}:u`, parentId: null, role: 'user', content: `Please look at issue ${i}.`, runId: null, status: 'complete' },
        { type: 'message.added', threadId, messageId: `msg:${i}:a`, parentId: `msg:${i}:u`, role: 'assistant', content: 'Done: the test passes now.', runId: null, status: 'complete' },
      );
    }
    store.append(...events);
  }
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

function main(): void {
  const max = arg('max', 10_000);
  const samples = arg('samples', 40);
  const counts = COUNTS.filter((n) => n <= max);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-store-'));
  const dbPath = path.join(dir, 'vox.db');
  const rand = seededRandom(SEED);
  console.log(`threads × ${THREAD_EVENTS} events each; medians of ${samples} samples (baseline: fewer at large sizes)`);
  console.log(['threads', 'subscribe', 'subscribe/log (old)', 'ratio', 'open (protocol)', 'list page', 'page JSON', 'list all (old)', 'all JSON'].join('\t'));
  let seeded = 0;
  for (const n of counts) {
    const store = VoxStore.open(dbPath, { schema: STORE_SCHEMAS });
    seedThreads(store, seeded, n);
    seeded = n;
    const pick = () => `thread:bench-${Math.floor(rand() * n)}`;
    const sub = time(() => store.subscribeThread(pick(), 0, () => undefined).unsubscribe(), samples);
    const baselineSamples = Math.max(3, Math.min(samples, Math.round(20_000 / n)));
    const old = time(() => {
      const id = pick();
      const s = store.subscribe(0, () => undefined);
      s.replay.filter((e) => e.threadId === id);
      s.unsubscribe();
    }, baselineSamples);
    const page = store.listThreadsPage({ limit: DEFAULT_THREAD_PAGE });
    const pageMs = time(() => store.listThreadsPage({ limit: DEFAULT_THREAD_PAGE }), samples);
    const allMs = time(() => store.listThreads(), baselineSamples);
    const allBytes = Buffer.byteLength(JSON.stringify(store.listThreads()));
    store.close();

    const engine = createEngine({ dbPath, workspaceRoot: dir, demoModelPath: path.join(dir, 'none.gguf'), autoCheckpoints: false }, environmentHost({ model: 'local:demo', notify: () => undefined }));
    let got: EngineUpdate | null = null;
    const session = engine.connect((u) => {
      if (u.type === 'events') got = u;
    }, ownerGrant('bench'));
    const open = time(() => {
      got = null;
      session.handle({ type: 'subscribeThread', requestId: 'b', threadId: pick(), afterSeq: 0 });
      if (!got) throw new Error('no events update');
    }, samples);
    session.dispose();
    void engine.dispose();

    console.log([n, fmt(sub), fmt(old), `${(old / sub).toFixed(0)}×`, fmt(open), fmt(pageMs), kb(Buffer.byteLength(JSON.stringify(page))), fmt(allMs), kb(allBytes)].join('\t'));
  }
  fs.rmSync(dir, { recursive: true, force: true });
  console.log('\nsubscribe and "open (protocol)" should stay flat as threads grow (they read one thread\'s rows);');
  console.log('the baseline grows with the whole log. The page stays one page; "all" is what one list message used to carry.');
}

main();
