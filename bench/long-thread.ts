/**
 * Benchmark: opening, scrolling and switching branches in a long thread, in the real chat webview
 * bundle (dist/webview.js, built first) in headless Chromium with the fake host of the webview
 * browser tests (test/webview/support/page.ts). The thread is synthetic but realistic
 * (test/webview/support/long-thread.ts: markdown, lists, code blocks, tool calls), 2,000 and
 * 10,000 messages, fed as the stored events the host sends after `subscribeThread` (in the batches
 * the engine sends a replay in, src/protocol/updates.ts replayChunks, each posted in its own task).
 * Baseline in the same run: the same bundle with `?virtualize=0`, which renders every entry (what
 * the list did before it was virtualised; a page flag for this bench only, never a setting).
 * Run: `npm run bench:long-thread` (or `npm run bench -- long-thread`). Not a test: no asserts.
 *
 * Per size and mode it prints:
 *   open        time from posting the events to the last message painted, and the longest gap
 *               between frames until the list settles;
 *   DOM nodes   elements in the document once settled;
 *   heap        JS heap growth (after a forced GC) from before the open to after it settles;
 *   top         jump to the top: time to the first message painted, longest frame gap;
 *   PageUp ×20  from the bottom: the longest frame gap;
 *   branch      with a second branch of the same size from the middle (rewind + another tail,
 *               untimed), `thread.branchSwitched` back to the first branch's leaf: the entries
 *               are replaced by the other path; time to its last message painted, gap.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { FAKE_HOST_SCRIPT, THEME_CSS, webviewHtml } from '../test/webview/support/page';
import { longThreadEvents, longThreadKeys } from '../test/webview/support/long-thread';
import { replayChunks } from '../src/protocol/updates';

/** What the page-side callbacks below touch (this file is type-checked without the DOM library). */
interface PageElement { scrollTop: number; clientHeight: number; scrollHeight: number; tabIndex: number; focus(): void; getBoundingClientRect(): { top: number; height: number } }
declare const document: { querySelector(selector: string): PageElement | null };
declare const window: Record<string, unknown> & { postMessage(m: unknown, origin: string): void };

const ROOT = path.resolve(__dirname, '..');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Thread sizes (messages; the list has as many entries). */
const SIZES = [2_000, 10_000];
/** The sidebar as a user has it: a tall, narrow view. */
const VIEWPORT = { width: 480, height: 900 };
/** Quiet time after a step before its frame gaps are read (measurement cascades settle). */
const SETTLE_MS = 600;
/** Longest wait for one step (the 10,000-message baseline takes a while). */
const STEP_TIMEOUT_MS = 180_000;
/** A step that takes longer is reported as "> STEP_BUDGET_MS" and the run's later steps are skipped (the page is still busy). */
const STEP_BUDGET_MS = 60_000;

class OverBudget extends Error {}
/** PageUp presses in the scroll step. */
const PAGE_UPS = 20;
const THREAD = 'thread:bench-long';
/** Runs per size of the virtualised list (the median of each figure is printed; the machine may be shared). */
const REPEATS = 3;
/** Runs of the baseline (slow: 10,000 messages take tens of seconds per run). */
const BASELINE_REPEATS = 1;

interface Row { size: number; mode: 'virtualised' | 'baseline'; openMs: number; openGapMs: number; domNodes: number; heapMiB: number; topMs: number; topGapMs: number; pageUpGapMs: number; branchMs: number; branchGapMs: number }

/** Page-side helpers: a rAF loop that records frame times, and "painted" = the frame after an element exists. */
const PAGE_SCRIPT = `
window.__frames = [];
(function loop(t) { window.__frames.push(performance.now()); requestAnimationFrame(loop); })();
window.__gapSince = (t0) => {
  let gap = 0, prev = t0;
  for (const f of window.__frames) { if (f < t0) continue; gap = Math.max(gap, f - prev); prev = f; }
  return Math.max(gap, performance.now() - prev);
};
window.__painted = (selector, t0) => new Promise((resolve) => {
  const check = () => {
    if (document.querySelector(selector)) requestAnimationFrame(() => resolve(performance.now() - t0));
    else requestAnimationFrame(check);
  };
  check();
});
`;

function serve(): Promise<{ origin: string; close(): Promise<void> }> {
  const files: Record<string, [string, string]> = {
    '/dist/webview.js': [path.join(ROOT, 'dist/webview.js'), 'text/javascript'],
    '/dist/webview.css': [path.join(ROOT, 'dist/webview.css'), 'text/css'],
  };
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0]!;
    if (url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(webviewHtml(origin, 'bench-nonce'));
    else if (url === '/theme.css') res.writeHead(200, { 'content-type': 'text/css' }).end(THEME_CSS);
    else if (files[url]) res.writeHead(200, { 'content-type': files[url]![1] }).end(fs.readFileSync(files[url]![0]));
    // The ES-module bundle's split chunks (shared code and code highlighting), as VS Code serves them from dist/.
    else if (/^\/dist\/webview-chunks\/[\w.-]+\.js$/.test(url) && fs.existsSync(path.join(ROOT, url))) res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(ROOT, url)));
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    resolve({ origin, close: () => new Promise((r) => server.close(() => r())) });
  }));
}

async function heapUsed(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  await cdp.detach();
  return usedSize;
}

async function waitPosted(page: Page, type: string): Promise<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    const hit = ((await page.evaluate('window.__posted')) as Record<string, unknown>[]).find((m) => m.type === type);
    if (hit) return hit;
    if (i > 2_000) throw new Error(`the webview never posted ${type}`);
    await page.waitForTimeout(10);
  }
}

/** Posts `events` (stashed in the page first, so the transfer from Node is not timed) and times the frame where `selector` is painted. */
async function timed(page: Page, events: unknown[] | null, act: string, selector: string): Promise<{ ms: number; gapMs: number }> {
  if (events) await page.evaluate((e) => { window.__next = e; }, events);
  const run = page.evaluate(`(async () => {
    const t0 = performance.now();
    ${act}
    const ms = await window.__painted(${JSON.stringify(selector)}, t0);
    return [t0, ms];
  })()`) as Promise<[number, number]>;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<null>((r) => (timer = setTimeout(() => r(null), STEP_BUDGET_MS)));
  const done = await Promise.race([run, budget]);
  clearTimeout(timer);
  if (done === null) {
    run.catch(() => {}); // the page is closed with the context
    throw new OverBudget();
  }
  const [t0, ms] = done;
  await page.waitForTimeout(SETTLE_MS);
  const gapMs = (await page.evaluate(`window.__gapSince(${t0})`)) as number;
  return { ms, gapMs };
}

async function measure(origin: string, size: number, mode: Row['mode']): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-long-'));
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: VIEWPORT, colorScheme: 'dark' });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    await page.addInitScript(FAKE_HOST_SCRIPT);
    await page.addInitScript(PAGE_SCRIPT);
    await page.goto(`${origin}/${mode === 'baseline' ? '?virtualize=0' : ''}`);
    await page.locator('.app').waitFor();
    const list = await waitPosted(page, 'listThreads');
    await page.evaluate((m) => window.postMessage(m, '*'), { type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: THREAD, title: 'Long thread', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
    await page.locator('button.open', { hasText: 'Long thread' }).click();
    await waitPosted(page, 'subscribeThread');
    await page.waitForTimeout(SETTLE_MS);
    const events = longThreadEvents({ threadId: THREAD, messages: size });
    const keys = longThreadKeys(size);
    const row: Row = { size, mode, openMs: NaN, openGapMs: NaN, domNodes: NaN, heapMiB: NaN, topMs: NaN, topGapMs: NaN, pageUpGapMs: NaN, branchMs: NaN, branchGapMs: NaN };
    try {
      const heap0 = await heapUsed(page);
      const post = `window.postMessage({ type: 'events', threadId: ${JSON.stringify(THREAD)}, events: window.__next }, '*'); window.__next = null;`;
      // The replay as the engine sends it: batches of REPLAY_CHUNK_EVENTS, each its own message (one task each).
      const postReplay = `for (const c of window.__next) setTimeout(() => window.postMessage({ type: 'events', threadId: ${JSON.stringify(THREAD)}, events: c.events, ...(c.more ? { more: true } : {}) }, '*'), 0); window.__next = null;`;
      const open = await timed(page, replayChunks(events), postReplay, `[data-vkey="${keys.at(-1)}"]`);
      row.openMs = open.ms;
      row.openGapMs = open.gapMs;
      row.domNodes = (await page.evaluate('document.getElementsByTagName("*").length')) as number;
      row.heapMiB = ((await heapUsed(page)) - heap0) / 2 ** 20;

      const top = await timed(page, null, `document.querySelector('.scroller').scrollTop = 0;`, `[data-vkey="${keys[0]}"]`);
      row.topMs = top.ms;
      row.topGapMs = top.gapMs;

      await page.evaluate(() => {
        const s = document.querySelector('.scroller')!;
        s.scrollTop = s.scrollHeight;
        s.tabIndex = -1; // focusable, so PageUp scrolls it (bench only)
        s.focus();
      });
      await page.waitForTimeout(SETTLE_MS);
      const t0 = (await page.evaluate('performance.now()')) as number;
      for (let i = 0; i < PAGE_UPS; i++) await page.keyboard.press('PageUp');
      await page.waitForTimeout(SETTLE_MS);
      row.pageUpGapMs = (await page.evaluate(`window.__gapSince(${t0})`)) as number;

      await page.evaluate(() => { const s = document.querySelector('.scroller')!; s.scrollTop = s.scrollHeight; });
      await page.waitForTimeout(SETTLE_MS);
      const half = size / 2;
      const tail = longThreadEvents({ threadId: THREAD, messages: half, variant: 'b', fromPair: half / 2, firstSeq: events.length + 2, created: false });
      const branchEvents = [{ seq: events.length + 1, time: Date.now(), threadId: THREAD, type: 'thread.rewound', toMessageId: `m:a${half / 2 - 1}` }, ...tail];
      // Another branch of the same size from the middle (untimed), then the switch back to the first one's leaf (timed).
      await timed(page, branchEvents, post, `[data-vkey="${longThreadKeys(half, 'b', half / 2).at(-1)}"]`);
      const switchBack = [{ seq: events.length + 2 + tail.length, time: Date.now(), threadId: THREAD, type: 'thread.branchSwitched', toMessageId: `m:a${size / 2 - 1}` }];
      const branch = await timed(page, switchBack, post, `[data-vkey="${keys.at(-1)}"]`);
      row.branchMs = branch.ms;
      row.branchGapMs = branch.gapMs;
    } catch (e) {
      if (!(e instanceof OverBudget)) throw e;
      console.log(`  ${size} messages, ${mode}: a step took over ${STEP_BUDGET_MS / 1000} s; its later figures are not measured`);
    }
    return row;
  } finally {
    await context.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Each figure's median over `runs`. */
function median(runs: Row[]): Row {
  const mid = (f: (r: Row) => number) => {
    const v = runs.map(f).sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  const first = runs[0]!;
  const out = { ...first };
  for (const k of Object.keys(first) as (keyof Row)[]) if (typeof first[k] === 'number' && k !== 'size') (out as Record<string, unknown>)[k] = mid((r) => r[k] as number);
  return out;
}

const fmt = (n: number, unit: string) => (Number.isNaN(n) ? `> ${STEP_BUDGET_MS / 1000} s` : `${n >= 100 ? n.toFixed(0) : n.toFixed(1)}${unit}`);

async function main(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`long-thread: skipped (${CHROMIUM} is not installed)`);
    return;
  }
  const build = spawnSync(process.execPath, ['esbuild.mjs', '--only=webview'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`webview build failed:\n${build.stdout}\n${build.stderr}`);
  const server = await serve();
  const rows: Row[] = [];
  try {
    for (const size of SIZES) {
      for (const mode of ['virtualised', 'baseline'] as const) {
        const runs: Row[] = [];
        for (let i = 0; i < (mode === 'baseline' ? BASELINE_REPEATS : REPEATS); i++) runs.push(await measure(server.origin, size, mode));
        rows.push(median(runs));
        console.log(`  measured ${size} messages, ${mode} (${runs.length} run${runs.length > 1 ? 's, median' : ''})`);
      }
    }
  } finally {
    await server.close();
  }
  console.log(`\nLong thread in the chat webview (headless Chromium ${VIEWPORT.width}×${VIEWPORT.height}; baseline = every entry rendered, ?virtualize=0)\n`);
  const cols: [string, (r: Row) => string, (r: Row) => number][] = [
    ['open→painted', (r) => fmt(r.openMs, ' ms'), (r) => r.openMs],
    ['open gap', (r) => fmt(r.openGapMs, ' ms'), (r) => r.openGapMs],
    ['DOM nodes', (r) => (Number.isNaN(r.domNodes) ? 'n/m' : String(r.domNodes)), (r) => r.domNodes],
    ['heap Δ', (r) => (Number.isNaN(r.heapMiB) ? 'n/m' : fmt(r.heapMiB, ' MiB')), (r) => r.heapMiB],
    ['top→painted', (r) => fmt(r.topMs, ' ms'), (r) => r.topMs],
    ['top gap', (r) => fmt(r.topGapMs, ' ms'), (r) => r.topGapMs],
    [`PageUp×${PAGE_UPS} gap`, (r) => fmt(r.pageUpGapMs, ' ms'), (r) => r.pageUpGapMs],
    ['branch→painted', (r) => fmt(r.branchMs, ' ms'), (r) => r.branchMs],
    ['branch gap', (r) => fmt(r.branchGapMs, ' ms'), (r) => r.branchGapMs],
  ];
  const head = ['messages', 'mode', ...cols.map((c) => c[0])];
  const lines: string[][] = [];
  for (const size of SIZES) {
    const v = rows.find((r) => r.size === size && r.mode === 'virtualised')!;
    const b = rows.find((r) => r.size === size && r.mode === 'baseline')!;
    lines.push([String(size), 'virtualised', ...cols.map((c) => c[1](v))]);
    lines.push([String(size), 'baseline', ...cols.map((c) => c[1](b))]);
    lines.push([String(size), 'baseline ÷ virtualised', ...cols.map((c) => (Number.isNaN(c[2](b)) ? 'n/m' : `${(c[2](b) / Math.max(c[2](v), 1e-9)).toFixed(1)}×`))]);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const print = (l: string[]) => console.log(l.map((c, i) => c.padStart(widths[i]!)).join('  '));
  print(head);
  for (const l of lines) print(l);
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'test-results', 'bench-long-thread.json'), JSON.stringify(rows, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
