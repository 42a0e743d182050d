/**
 * Benchmark: what redaction costs on the text the store takes in, next to the baseline it
 * replaced in the same run. Run: `npm run bench:redaction`. Not a test.
 *
 *   (a) vox        `redact`: gitleaks' rule set (221 rules) + Vox's, keyword prefilter first
 *   (b) three-re   the old redaction: three regular expressions (Bearer, sk-…, x-api-key) over
 *                  the whole text, which missed most token formats
 *
 * Texts: a chat answer (2 KB of prose with code), this repository's own TypeScript sources
 * (one ~15 KB file at a time, the shape of a read_file result), a 1 MB build log, and a 200 KB
 * base64 image; each timed REPEATS times, the median in µs per text and MB/s reported, with the
 * ratio (a)/(b). Goal for (a): a few hundred µs for a tool result, invisible next to a model call.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { redact } from '../src/engine/platform/secrets';
import { seededBytes, seededRandom } from '../test/support/random';

/** Timed passes per text; the median is reported. */
const REPEATS = 15;

const OLD_SHAPES: readonly RegExp[] = [
  /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\b(x-api-key["']?\s*[:=]\s*["']?)[A-Za-z0-9._-]{8,}/gi,
];
function oldRedact(text: string): string {
  let out = text;
  for (const re of OLD_SHAPES) out = out.replace(re, (_m, prefix?: string) => `${typeof prefix === 'string' ? prefix : ''}[redacted]`);
  return out;
}

function sources(): string[] {
  const root = path.resolve(__dirname, '../src/engine');
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function time(fn: (t: string) => string, texts: string[]): number {
  const runs: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    for (const t of texts) fn(t);
    runs.push((performance.now() - t0) * 1000 / texts.length);
  }
  return median(runs);
}

function main(): void {
  const rand = seededRandom(7);
  const answer = ('Here is the fix: the parser read the token before the key was checked, so `const apiKey = loadKey(cfg)` ran twice. ' +
    '```ts\nexport function parse(input: string): Config {\n  const token = input.trim();\n  return { token, key: hash(token) };\n}\n```\n').repeat(8);
  const srcs = sources();
  const logLines: string[] = [];
  for (let i = 0; i < 12_000; i++) logLines.push(`[${String(i).padStart(6, '0')}] INFO build step ${i % 97}: compiled src/module-${i % 311}.ts in ${(rand() * 90).toFixed(1)} ms (cache key ${Math.floor(rand() * 1e9).toString(16)})`);
  const log = logLines.join('\n');
  const image = `data:image/png;base64,${seededBytes(rand, 150_000).toString('base64')}`;
  const sets: Array<[string, string[]]> = [
    ['chat answer', [answer]],
    [`source files (${srcs.length})`, srcs],
    ['build log', [log]],
    ['base64 image', [image]],
  ];
  process.stdout.write(`redaction: median of ${REPEATS}, µs per text (MB/s)\n`);
  for (const [name, texts] of sets) {
    const bytes = texts.reduce((n, t) => n + t.length, 0) / texts.length;
    oldRedact(texts[0] ?? '');
    redact(texts[0] ?? '');
    const a = time(redact, texts);
    const b = time(oldRedact, texts);
    const mbps = (us: number) => (bytes / us).toFixed(0);
    process.stdout.write(`  ${name.padEnd(22)} ${(bytes / 1024).toFixed(1).padStart(7)} KB   vox ${a.toFixed(0).padStart(7)} µs (${mbps(a)} MB/s)   three-re ${b.toFixed(0).padStart(6)} µs (${mbps(b)} MB/s)   vox/three-re ×${(a / b).toFixed(1)}\n`);
  }
}

main();
