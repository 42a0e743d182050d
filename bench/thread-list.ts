/**
 * Benchmark: the thread list with 5,000 threads, in the real chat webview bundle
 * (dist/webview.js, built first) in headless Chromium with the fake host of the webview browser
 * tests (test/webview/support/page.ts). The host's side runs in the page (an init script wraps
 * `postMessage`), so answering a page costs what the extension host's hop would, not a Node round
 * trip: each `listThreads` is answered in a task of its own with the page asked for, exactly as
 * the engine pages (`limit`, `before`, `nextCursor`).
 * Modes, in the same run:
 *   chunked     what the webview does now: the first 16 threads, then pages of 200 every 50 ms
 *               (webview/src/lib/thread-list-loader.ts) into the virtualised list;
 *   baseline    `?virtualize=0` and the host answering the first request with all 5,000 threads
 *               at once: every row rendered, 16 more every 50 ms (what the list did before; the
 *               issue measured it: first rows 703 ms, whole list 20 s, 193 dropped frames, 70,000
 *               DOM nodes). A page flag for this bench only, never a setting.
 * Run: `npm run bench:thread-list` (or `npm run bench -- thread-list`). Not a test: no asserts.
 *
 * Per mode it prints (times from the webview's first `listThreads`, i.e. from when the list is asked for):
 *   first rows     the first thread row painted;
 *   whole list     every thread in the list (chunked: all 5,000 in the virtual list's items;
 *                  baseline: 5,000 rows in the DOM), painted;
 *   dropped        frames missed (each frame gap of k × 16.7 ms counts k − 1) until then + settle;
 *   longest gap    the longest gap between two frames in that time;
 *   DOM nodes      elements in the document once settled;
 *   reopen         the webview re-created (page reload; the saved state survives, as VS Code keeps
 *                  it): first rows painted, and the rows the list holds at that frame (the whole
 *                  list when it is not loaded again), then the whole list again.
 * Also saves test-results/bench-thread-list.png (the chunked list in the sidebar's size).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { FAKE_HOST_SCRIPT, THEME_CSS, webviewHtml } from '../test/webview/support/page';

const ROOT = path.resolve(__dirname, '..');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Threads in the list. */
const THREADS = 5_000;
/** The sidebar as a user has it: a tall, narrow view. */
const VIEWPORT = { width: 480, height: 900 };
/** Quiet time after the list is whole before frame gaps and DOM nodes are read. */
const SETTLE_MS = 600;
/** One frame at 60 Hz (ms). */
const FRAME_MS = 1000 / 60;
/** Longest wait for one step (the baseline takes ~20 s per fill). */
const STEP_TIMEOUT_MS = 120_000;
/** Runs of the chunked list (the median of each figure is printed; the machine may be shared). */
const REPEATS = 3;
/** Runs of the baseline (slow). */
const BASELINE_REPEATS = 1;

type Mode = 'chunked' | 'baseline';
interface Row { mode: Mode; firstMs: number; wholeMs: number; dropped: number; gapMs: number; domNodes: number; requests: number; reopenFirstMs: number; reopenRowsAtFirst: number; reopenWholeMs: number }

/** The fake host's list side and the frame recorder, in the page before any page script. */
function pageScript(mode: Mode): string {
  return `
window.__frames = [];
(function loop() { window.__frames.push(performance.now()); requestAnimationFrame(loop); })();
const threads = Array.from({ length: ${THREADS} }, (_, i) => ({ id: 't' + i, title: 'Thread ' + i + ': ' + ['fix the parser', 'add a test for the importer', 'why does the build fail', 'refactor the store', 'explain this regex'][i % 5], createdAt: 1e12 - i * 60000, updatedAt: 1.7e12 - i * 60000, lastSeq: 3 }));
function pageOf(m) {
  if (${JSON.stringify(mode)} === 'baseline') return { threads, nextCursor: null };
  const start = m.before === undefined ? 0 : Number(m.before.slice(1)) + 1;
  const rows = threads.slice(start, start + m.limit);
  return { threads: rows, nextCursor: start + m.limit < threads.length ? rows[rows.length - 1].id : null };
}
window.__lists = 0;
const acquire = window.acquireVsCodeApi;
window.acquireVsCodeApi = () => {
  const api = acquire();
  return { getState: api.getState, setState: api.setState, postMessage: (m) => {
    api.postMessage(m);
    if (m && m.type === 'listThreads') {
      if (window.__t0 === undefined) {
        window.__t0 = performance.now();
        // Watched from this moment, frame by frame (a wait started later from Node would see it late).
        window.__first = window.__until(${FIRST_ROW});
        window.__whole = window.__until(${WHOLE(mode)});
      }
      window.__lists++;
      setTimeout(() => window.postMessage({ type: 'result', inReplyTo: m.requestId, value: pageOf(m) }, '*'), 0);
    }
  } };
};
/** Resolves with the time of the frame after check() first holds (and notes the rows the list holds then). */
window.__until = (check) => new Promise((resolve) => {
  const step = () => {
    if (!check()) return requestAnimationFrame(step);
    if (window.__firstRows === undefined) window.__firstRows = Number(document.querySelector('.thread-scroll')?.dataset.threads ?? 0);
    requestAnimationFrame(() => resolve(performance.now()));
  };
  step();
});
window.__framesSince = (t0) => {
  let gap = 0, dropped = 0, prev = t0;
  for (const f of window.__frames) { if (f < t0) continue; const g = f - prev; gap = Math.max(gap, g); dropped += Math.max(0, Math.round(g / ${FRAME_MS}) - 1); prev = f; }
  return { gap, dropped };
};
`;
}

const FIRST_ROW = `() => document.querySelector('ul.threads button.open') !== null`;
const WHOLE = (mode: Mode) => mode === 'chunked'
  ? `() => { const s = document.querySelector('.thread-scroll'); return !!s && s.dataset.threads === '${THREADS}' && s.dataset.loading === 'done'; }`
  : `() => { const u = document.querySelector('ul.threads'); return !!u && u.childElementCount >= ${THREADS}; }`;

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
    else if (/^\/dist\/webview-chunks\/[\w.-]+\.js$/.test(url) && fs.existsSync(path.join(ROOT, url))) res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(ROOT, url)));
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    resolve({ origin, close: () => new Promise((r) => server.close(() => r())) });
  }));
}

const evalNum = async (page: Page, js: string): Promise<number> => (await page.evaluate(js)) as number;

async function measure(origin: string, mode: Mode, screenshot: string | null): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-threads-'));
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: VIEWPORT, colorScheme: 'dark' });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    await page.addInitScript(FAKE_HOST_SCRIPT);
    await page.addInitScript(pageScript(mode));
    await page.goto(`${origin}/${mode === 'baseline' ? '?virtualize=0' : ''}`);
    // Both waits start at once (page-side), so the first-row wait does not delay the whole-list one.
    await page.waitForFunction('window.__t0 !== undefined');
    const [firstAt, wholeAt] = (await page.evaluate('Promise.all([window.__first, window.__whole])')) as [number, number];
    const t0 = await evalNum(page, 'window.__t0');
    await page.waitForTimeout(SETTLE_MS);
    const frames = (await page.evaluate(`window.__framesSince(${t0})`)) as { gap: number; dropped: number };
    const row: Row = {
      mode, firstMs: firstAt - t0, wholeMs: wholeAt - t0, dropped: frames.dropped, gapMs: frames.gap,
      domNodes: await evalNum(page, 'document.getElementsByTagName("*").length'), requests: await evalNum(page, 'window.__lists'),
      reopenFirstMs: NaN, reopenRowsAtFirst: NaN, reopenWholeMs: NaN,
    };
    if (screenshot) {
      await page.evaluate(`document.querySelector('.thread-scroll').scrollTop = 2400`);
      await page.waitForTimeout(SETTLE_MS);
      await page.screenshot({ path: screenshot });
    }
    // Reopen: VS Code re-creates the webview; its saved state (sessionStorage here) survives.
    await page.reload();
    await page.waitForFunction('window.__t0 !== undefined');
    const [reFirst, reWhole, reT0] = (await page.evaluate('Promise.all([window.__first, window.__whole, window.__t0, window.__firstRows])')) as [number, number, number];
    row.reopenFirstMs = reFirst - reT0;
    row.reopenRowsAtFirst = await evalNum(page, 'window.__firstRows');
    row.reopenWholeMs = reWhole - reT0;
    return row;
  } finally {
    await context.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function median(runs: Row[]): Row {
  const mid = (k: keyof Row) => {
    const v = runs.map((r) => r[k] as number).sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  const out = { ...runs[0]! };
  for (const k of Object.keys(out) as (keyof Row)[]) if (k !== 'mode') (out as Record<string, unknown>)[k] = mid(k);
  return out;
}

const ms = (n: number) => (Number.isNaN(n) ? 'n/m' : n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(1)} ms`);

async function main(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`thread-list: skipped (${CHROMIUM} is not installed)`);
    return;
  }
  const build = spawnSync(process.execPath, ['esbuild.mjs', '--only=webview'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`webview build failed:\n${build.stdout}\n${build.stderr}`);
  const server = await serve();
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const rows: Row[] = [];
  try {
    for (const mode of ['chunked', 'baseline'] as const) {
      const runs: Row[] = [];
      const n = mode === 'baseline' ? BASELINE_REPEATS : REPEATS;
      for (let i = 0; i < n; i++) runs.push(await measure(server.origin, mode, mode === 'chunked' && i === 0 ? path.join(ROOT, 'test-results', 'bench-thread-list.png') : null));
      rows.push(median(runs));
      console.log(`  measured ${mode} (${n} run${n > 1 ? 's, median' : ''})`);
    }
  } finally {
    await server.close();
  }
  const [c, b] = [rows[0]!, rows[1]!];
  console.log(`\nThread list, ${THREADS} threads, in the chat webview (headless Chromium ${VIEWPORT.width}×${VIEWPORT.height}; baseline = one answer with every thread, every row rendered, ?virtualize=0)\n`);
  const cols: [string, (r: Row) => string, (r: Row) => number][] = [
    ['first rows', (r) => ms(r.firstMs), (r) => r.firstMs],
    ['whole list', (r) => ms(r.wholeMs), (r) => r.wholeMs],
    ['dropped frames', (r) => String(r.dropped), (r) => r.dropped],
    ['longest gap', (r) => ms(r.gapMs), (r) => r.gapMs],
    ['DOM nodes', (r) => String(r.domNodes), (r) => r.domNodes],
    ['requests', (r) => String(r.requests), (r) => r.requests],
    ['reopen: first rows', (r) => ms(r.reopenFirstMs), (r) => r.reopenFirstMs],
    ['rows at that frame', (r) => String(r.reopenRowsAtFirst), (r) => r.reopenRowsAtFirst],
    ['reopen: whole list', (r) => ms(r.reopenWholeMs), (r) => r.reopenWholeMs],
  ];
  const head = ['mode', ...cols.map((x) => x[0])];
  const lines = [
    ['chunked + virtualised', ...cols.map((x) => x[1](c))],
    ['baseline', ...cols.map((x) => x[1](b))],
    ['baseline ÷ chunked', ...cols.map((x) => `${(x[2](b) / Math.max(x[2](c), 1e-9)).toFixed(1)}×`)],
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const print = (l: string[]) => console.log(l.map((x, i) => x.padStart(widths[i]!)).join('  '));
  print(head);
  for (const l of lines) print(l);
  console.log(`\nGoal: first rows < 300 ms — ${c.firstMs < 300 ? 'met' : 'NOT met'} (${ms(c.firstMs)}).`);
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'test-results', 'bench-thread-list.json'), JSON.stringify(rows, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
