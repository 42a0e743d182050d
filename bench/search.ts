/**
 * Benchmark: search over a generated history of THREADS threads × MESSAGES_PER_THREAD messages
 * (10,000 × 50 = 500,000 by default), Vox's search (SPEC 6.4: the FTS5 trigram index + the fuzzy
 * title score, src/engine/search/) next to MiniSearch and Fuse.js on the same corpus in the same
 * run: index build time and size for each, p50/p95 query latency, and the ratios.
 * Run: `npm run bench:search [-- --threads 10000 --messages 50 --queries 200 --fuse-queries 3]`.
 * Not a test: no asserts (the goal, printed: Vox's p95 under 30 ms and below both peers').
 *
 * Corpus (deterministic: mulberry32, seed SEED): message text of MIN_WORDS..MAX_WORDS words drawn
 * with a skew (common words common) from an English + programming vocabulary and from generated
 * camelCase identifiers, with a Markdown link in LINK_CHANCE of the messages and a file path in
 * PATH_CHANCE; titles of 3..6 words.
 *
 * How each is built:
 *   Vox        the store's tables written directly (threads, messages: what the projections would
 *              hold), then the index built by migration 13's own backfill (createSearchIndex) in
 *              one transaction: build time = that; size = the database pages it added.
 *   MiniSearch every message as {id, text}, `addAll`; size = its JSON serialisation; searched with
 *              prefix matching and AND (its closest to Vox's literal terms; no substrings).
 *   Fuse.js    every message as {id, text}, `Fuse.createIndex`; size = its JSON; threshold 0.3,
 *              ignoreLocation. A Fuse query scans every record (seconds at this size), so it runs
 *              only the first --fuse-queries queries; the output says so.
 * Queries (QUERY_COUNT, deterministic): single common words, two words, identifier fragments
 * (substrings, 5..9 characters), whole rare identifiers, and title-like word pairs. Vox's time is
 * the whole `searchThreads` call (titles and messages, 20 each); its body search alone is shown too.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import Fuse from 'fuse.js';
import MiniSearch from 'minisearch';
import { VoxStore } from '../src/engine/store/store';
import { STORE_SCHEMAS } from '../src/engine/modules';
import { createSearchIndex } from '../src/engine/search/index-sync';
import { searchBodies } from '../src/engine/search/body-search';
import { searchThreads } from '../src/engine/search/search';
import { Rng } from '../test/support/random';

const SEED = 0x5ea2c4;
const MIN_WORDS = 6;
const MAX_WORDS = 40;
/** Share of messages with a Markdown link. */
const LINK_CHANCE = 0.06;
/** Share of messages that mention a file path. */
const PATH_CHANCE = 0.1;
/** Generated camelCase identifiers in the vocabulary. */
const IDENTIFIERS = 3_000;
/** Share of a message's words that are identifiers. */
const IDENTIFIER_SHARE = 0.15;
/** Results asked per list. */
const RESULT_LIMIT = 20;
/** Rows per insert transaction while seeding. */
const SEED_BATCH = 10_000;
/** Goal for Vox's p95 (ms). */
const P95_GOAL_MS = 30;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const THREADS = arg('threads', 10_000);
const MESSAGES_PER_THREAD = arg('messages', 50);
const QUERY_COUNT = arg('queries', 200);
const FUSE_QUERIES = arg('fuse-queries', 3);

const WORDS = (
  'the a to of and in is it that for you this with on be not are as have can at we or but if from by so will what all ' +
  'would there do one about when which their an out up more some time just like make how know could then get only ' +
  'new first also any because these two way use very after work well should need back where much through still even ' +
  'file function test error build config server client request response value type string number array object method ' +
  'class interface module import export return async await promise callback event handler listener stream buffer ' +
  'database query index table column migration schema transaction commit branch merge rebase checkout diff patch ' +
  'deploy release version package dependency install compile bundle lint format refactor rename extract inline ' +
  'parser lexer token syntax tree node visitor render component state props hook effect memo context provider ' +
  'cache memory thread process worker queue timeout retry backoff socket connection latency throughput benchmark ' +
  'login logout session cookie header token auth permission role user account password secret key certificate ' +
  'docker container image cluster kubernetes pod service ingress staging production environment variable secret ' +
  'bug fix issue crash regression flaky failing passing assertion mock fixture snapshot coverage report review ' +
  'terminal command shell script argument option flag path directory folder workspace editor extension window ' +
  'layout style theme color font width height scroll virtual list item row cell grid chart graph metric log trace'
).split(' ');

const PATH_PARTS = ['src', 'lib', 'test', 'engine', 'store', 'webview', 'components', 'utils', 'server', 'api', 'core', 'cli'];

interface Corpus {
  titles: string[];
  /** messages[thread * MESSAGES_PER_THREAD + i] */
  messages: string[];
  identifiers: string[];
}

function cap(w: string): string {
  return w[0]!.toUpperCase() + w.slice(1);
}

/** An integer in [lo, hi]. */
function between(rng: Rng, lo: number, hi: number): number {
  return lo + rng.int(hi - lo + 1);
}

/** Skewed pick: low indices (common words) far more often. */
function skewed<T>(rng: Rng, xs: readonly T[]): T {
  const r = rng.next();
  return xs[Math.floor(r * r * r * xs.length)]!;
}

function generate(): Corpus {
  const rng = new Rng(SEED);
  const content = WORDS.slice(40); // programming words for identifiers and titles
  const identifiers: string[] = [];
  const seen = new Set<string>();
  while (identifiers.length < IDENTIFIERS) {
    const parts = between(rng, 2, 3);
    let id = rng.pick(content);
    for (let i = 1; i < parts; i++) id += cap(rng.pick(content));
    if (!seen.has(id)) {
      seen.add(id);
      identifiers.push(id);
    }
  }
  const titles: string[] = [];
  const messages: string[] = [];
  for (let t = 0; t < THREADS; t++) {
    const n = between(rng, 3, 6);
    const tw: string[] = [];
    for (let i = 0; i < n; i++) tw.push(rng.chance(0.2) ? skewed(rng, identifiers) : skewed(rng, content));
    titles.push(cap(tw.join(' ')));
    for (let m = 0; m < MESSAGES_PER_THREAD; m++) {
      const len = between(rng, MIN_WORDS, MAX_WORDS);
      const ws: string[] = [];
      for (let i = 0; i < len; i++) ws.push(rng.chance(IDENTIFIER_SHARE) ? skewed(rng, identifiers) : skewed(rng, WORDS));
      if (rng.chance(PATH_CHANCE)) ws.splice(between(rng, 0, ws.length), 0, `${rng.pick(PATH_PARTS)}/${rng.pick(PATH_PARTS)}/${rng.pick(identifiers)}.ts`);
      if (rng.chance(LINK_CHANCE)) ws.splice(between(rng, 0, ws.length), 0, `[${rng.pick(content)} docs](https://docs.example.com/${rng.pick(content)}/${rng.pick(identifiers)})`);
      messages.push(cap(ws.join(' ')) + '.');
    }
  }
  return { titles, messages, identifiers };
}

function makeQueries(c: Corpus): string[] {
  const rng = new Rng(SEED + 1);
  const content = WORDS.slice(40);
  const qs: string[] = [];
  for (let i = 0; i < QUERY_COUNT; i++) {
    const kind = i % 5;
    if (kind === 0) qs.push(skewed(rng, content));
    else if (kind === 1) qs.push(`${skewed(rng, content)} ${skewed(rng, content)}`);
    else if (kind === 2) {
      const id = skewed(rng, c.identifiers);
      const len = Math.min(id.length, between(rng, 5, 9));
      const at = between(rng, 0, id.length - len);
      qs.push(id.slice(at, at + len).toLowerCase());
    } else if (kind === 3) qs.push(c.identifiers[c.identifiers.length - 1 - between(rng, 0, 500)]!);
    else qs.push(c.titles[between(rng, 0, c.titles.length - 1)]!.split(' ').slice(0, 2).join(' '));
  }
  return qs;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

function timeQueries(qs: readonly string[], fn: (q: string) => number): { p50: number; p95: number; hits: number; n: number } {
  const times: number[] = [];
  let hits = 0;
  for (const q of qs) {
    const t0 = performance.now();
    hits += fn(q);
    times.push(performance.now() - t0);
  }
  return { p50: pct(times, 50), p95: pct(times, 95), hits, n: qs.length };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (x: number) => `${x.toFixed(2)} ms`;
const s = (x: number) => `${(x / 1000).toFixed(1)} s`;

function buildVox(c: Corpus, dir: string): { store: VoxStore; buildMs: number; bytes: number } {
  const store = VoxStore.open(path.join(dir, 'vox.db'), { schema: STORE_SCHEMAS });
  const db = store.db;
  db.exec('DROP TABLE search_fts; DROP TABLE search_docs;');
  const now = Date.now();
  const insThread = db.prepare('INSERT INTO threads (id, title, created_at, updated_at, head_set) VALUES (?, ?, ?, ?, 0)');
  const insMsg = db.prepare("INSERT INTO messages (id, thread_id, parent_id, role, content, run_id, status, created_at) VALUES (?, ?, ?, ?, ?, NULL, 'complete', ?)");
  for (let t0 = 0; t0 < THREADS; t0 += SEED_BATCH / MESSAGES_PER_THREAD) {
    db.transaction(() => {
      for (let t = t0; t < Math.min(THREADS, t0 + SEED_BATCH / MESSAGES_PER_THREAD); t++) {
        const tid = `thread:${t}`;
        const at = now - (THREADS - t) * 60_000;
        insThread.run(tid, c.titles[t], at, at);
        for (let m = 0; m < MESSAGES_PER_THREAD; m++) {
          insMsg.run(`m:${t}:${m}`, tid, m === 0 ? null : `m:${t}:${m - 1}`, m % 2 === 0 ? 'user' : 'assistant', c.messages[t * MESSAGES_PER_THREAD + m], at + m);
        }
      }
    });
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  const before = (db.pragma('page_count') as number) * (db.pragma('page_size') as number);
  const t0 = performance.now();
  db.transaction(() => createSearchIndex(db));
  const buildMs = performance.now() - t0;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const after = (db.pragma('page_count') as number) * (db.pragma('page_size') as number);
  return { store, buildMs, bytes: after - before };
}

function main(): void {
  const total0 = performance.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-search-'));
  try {
    console.log(`Search benchmark: ${THREADS.toLocaleString('en')} threads × ${MESSAGES_PER_THREAD} messages = ${(THREADS * MESSAGES_PER_THREAD).toLocaleString('en')} messages (seed ${SEED.toString(16)}), ${os.cpus().length} cores, Node ${process.versions.node}`);
    let t0 = performance.now();
    const corpus = generate();
    const textBytes = corpus.messages.reduce((n, m) => n + Buffer.byteLength(m), 0);
    console.log(`corpus generated in ${s(performance.now() - t0)}: ${mb(textBytes)} of message text`);
    const queries = makeQueries(corpus);
    console.log(`queries: ${queries.length}, e.g. ${queries.slice(0, 5).map((q) => JSON.stringify(q)).join(', ')}`);

    const vox = buildVox(corpus, dir);
    console.log(`Vox index built in ${s(vox.buildMs)}, ${mb(vox.bytes)}`);
    const now = Date.now();
    searchThreads(vox.store.db, queries[0]!, { now, limit: RESULT_LIMIT }); // warm the statement cache
    const voxAll = timeQueries(queries, (q) => {
      const r = searchThreads(vox.store.db, q, { now, limit: RESULT_LIMIT });
      return r.titles.length + r.messages.length;
    });
    const voxBody = timeQueries(queries, (q) => searchBodies(vox.store.db, q, RESULT_LIMIT).length);
    const voxTitles = timeQueries(queries, (q) => searchThreads(vox.store.db, q, { now, limit: RESULT_LIMIT }).titles.length);
    console.log(`Vox titles (${THREADS.toLocaleString('en')}, with the body search): p50 ${ms(voxTitles.p50)} p95 ${ms(voxTitles.p95)}`);
    const kinds = ['word', 'two words', 'identifier fragment', 'rare identifier', 'title words'];
    const perKind = kinds.map((k, i) => {
      const t = timeQueries(queries.filter((_, j) => j % 5 === i), (q) => searchBodies(vox.store.db, q, RESULT_LIMIT).length);
      return `${k} p50 ${ms(t.p50)} p95 ${ms(t.p95)}`;
    });
    console.log(`Vox bodies by query kind: ${perKind.join('; ')}`);
    vox.store.close();
    if (process.argv.includes('--vox-only')) {
      console.log(`Vox searchThreads p50 ${ms(voxAll.p50)} p95 ${ms(voxAll.p95)}; bodies only p50 ${ms(voxBody.p50)} p95 ${ms(voxBody.p95)}`);
      return;
    }

    const docs = corpus.messages.map((text, id) => ({ id, text }));
    t0 = performance.now();
    const mini = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], storeFields: [] });
    mini.addAll(docs);
    const miniBuild = performance.now() - t0;
    const miniBytes = Buffer.byteLength(JSON.stringify(mini));
    console.log(`MiniSearch index built in ${s(miniBuild)}, ${mb(miniBytes)} (JSON)`);
    const miniQ = timeQueries(queries, (q) => mini.search(q, { prefix: true, combineWith: 'AND' }).slice(0, RESULT_LIMIT).length);

    t0 = performance.now();
    const fuseIndex = Fuse.createIndex(['text'], docs);
    const fuseBuild = performance.now() - t0;
    const fuseBytes = Buffer.byteLength(JSON.stringify(fuseIndex.toJSON()));
    console.log(`Fuse.js index built in ${s(fuseBuild)}, ${mb(fuseBytes)} (JSON)`);
    const fuse = new Fuse(docs, { keys: ['text'], threshold: 0.3, ignoreLocation: true }, fuseIndex);
    const fuseQ = timeQueries(queries.slice(0, FUSE_QUERIES), (q) => fuse.search(q, { limit: RESULT_LIMIT }).length);

    const rows: [string, number, number, { p50: number; p95: number; hits: number; n: number }][] = [
      ['Vox searchThreads', vox.buildMs, vox.bytes, voxAll],
      ['Vox bodies only', vox.buildMs, vox.bytes, voxBody],
      ['MiniSearch', miniBuild, miniBytes, miniQ],
      ['Fuse.js', fuseBuild, fuseBytes, fuseQ],
    ];
    console.log('');
    console.log('engine              build      size        queries   p50         p95         results');
    for (const [name, b, size, q] of rows) {
      console.log(`${name.padEnd(20)}${s(b).padEnd(11)}${mb(size).padEnd(12)}${String(q.n).padEnd(10)}${ms(q.p50).padEnd(12)}${ms(q.p95).padEnd(12)}${q.hits}`);
    }
    console.log(`(Fuse.js: only the first ${fuseQ.n} of ${queries.length} queries — each scans all ${docs.length.toLocaleString('en')} records)`);
    console.log('');
    console.log(`ratios (peer / Vox searchThreads): MiniSearch p50 ×${(miniQ.p50 / voxAll.p50).toFixed(1)}, p95 ×${(miniQ.p95 / voxAll.p95).toFixed(1)}, build ×${(miniBuild / vox.buildMs).toFixed(2)}; ` +
      `Fuse.js p50 ×${(fuseQ.p50 / voxAll.p50).toFixed(0)}, p95 ×${(fuseQ.p95 / voxAll.p95).toFixed(0)}, build ×${(fuseBuild / vox.buildMs).toFixed(2)}`);
    const ok = voxAll.p95 < P95_GOAL_MS && voxAll.p95 < miniQ.p95 && voxAll.p95 < fuseQ.p95;
    console.log(`goal (p95 < ${P95_GOAL_MS} ms and below both peers): ${ok ? 'met' : 'NOT met'} — Vox p95 ${ms(voxAll.p95)}`);
    console.log(`total ${s(performance.now() - total0)}`);
  } finally {
    if (process.argv.includes('--keep')) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Heap the peers' in-memory indexes need at 500,000 messages (`npm run bench` starts benches without a flag). */
const HEAP_MB = 8192;

if (v8.getHeapStatistics().heap_size_limit < (HEAP_MB / 2) * 1024 * 1024) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import=tsx', ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
} else {
  main();
}
