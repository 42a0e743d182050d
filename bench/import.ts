/**
 * Benchmark: importing a large synthetic Claude Code history (goal ≥ 50 MB/s) next to a
 * baseline in the same run — reading every file and JSON.parse of every line, nothing else (the
 * floor any JSONL importer pays) — and the re-import (nothing changed: a stat per file) and a
 * forced re-read (bookkeeping dropped: every line parsed again, every event found already stored).
 * The history is generated from the line shapes the real CLIs wrote (the recorded 2.0 and 2.1
 * fixtures, their session and line ids renamed per copy), so attachments, api-request blobs,
 * tool calls, results and sub-agents weigh what they weigh in real transcripts.
 * Run: `npm run bench:import [-- --mb 200]`. Not a test: no asserts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { VoxStore } from '../src/engine/store/store';
import { STORE_SCHEMAS } from '../src/engine/modules';
import { ImportService } from '../src/engine/importers/service';

/** Default size of the generated history (MB). */
const DEFAULT_MB = 120;
/** Sessions per project folder. */
const SESSIONS_PER_PROJECT = 50;
const FIXTURES = path.resolve(__dirname, '../test/fixtures/importers');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

/** The template sessions: each main transcript with its sub-agent files (paths relative to the project folder). */
function templates(): { files: { rel: string; text: string }[] }[] {
  const out: { files: { rel: string; text: string }[] }[] = [];
  for (const v of ['claude-code-2.0', 'claude-code-2.1']) {
    const proj = path.join(FIXTURES, v, 'projects', '-FIXTURE-WORK');
    const all = (fs.readdirSync(proj, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl') && fs.statSync(path.join(proj, f)).size > 0);
    out.push({ files: all.map((rel) => ({ rel, text: fs.readFileSync(path.join(proj, rel), 'utf8') })) });
  }
  return out;
}

function generate(root: string, targetBytes: number): { bytes: number; files: number; sessions: number } {
  const tpl = templates();
  let bytes = 0;
  let files = 0;
  let n = 0;
  while (bytes < targetBytes) {
    const t = tpl[n % tpl.length]!;
    const project = path.join(root, 'projects', `-bench-project-${Math.floor(n / SESSIONS_PER_PROJECT)}`);
    const hex = n.toString(16).padStart(8, '0');
    // Every uuid of the copy gets this session's prefix: new session, line and prompt ids, same shapes.
    const rename = (s: string) => s.replace(UUID, (u) => `${hex}${u.slice(8)}`);
    for (const f of t.files) {
      const dst = path.join(project, rename(f.rel));
      fs.mkdirSync(path.dirname(dst), { recursive: true });
      const text = rename(f.text);
      fs.writeFileSync(dst, text);
      bytes += Buffer.byteLength(text);
      files++;
    }
    n++;
  }
  return { bytes, files, sessions: n };
}

function baseline(root: string): number {
  const t0 = performance.now();
  let lines = 0;
  for (const f of fs.readdirSync(path.join(root, 'projects'), { recursive: true }) as string[]) {
    if (!f.endsWith('.jsonl')) continue;
    for (const l of fs.readFileSync(path.join(root, 'projects', f), 'utf8').split('\n')) {
      if (l.length === 0) continue;
      JSON.parse(l);
      lines++;
    }
  }
  if (lines === 0) throw new Error('no lines');
  return performance.now() - t0;
}

function main(): void {
  const mb = arg('mb', DEFAULT_MB);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-import-'));
  try {
    const home = path.join(dir, 'claude');
    const g = generate(home, mb * 1024 * 1024);
    const total = g.bytes / 1024 / 1024;
    console.log(`history: ${total.toFixed(1)} MB in ${g.files} files, ${g.sessions} sessions (from the recorded 2.0.77 / 2.1.332 transcripts)`);
    baseline(home); // warm the page cache for both
    const base = baseline(home);
    const store = VoxStore.open(path.join(dir, 'vox.db'), { schema: STORE_SCHEMAS });
    const svc = new ImportService(store);
    let t0 = performance.now();
    const r = svc.import({ claudeDir: home }).sources[0]!;
    const first = performance.now() - t0;
    const events = store.lastSeq();
    t0 = performance.now();
    svc.import({ claudeDir: home });
    const again = performance.now() - t0;
    store.db.exec('DELETE FROM import_files');
    t0 = performance.now();
    svc.import({ claudeDir: home });
    const reread = performance.now() - t0;
    if (store.lastSeq() !== events) throw new Error('re-import changed the store');
    store.close();
    const rate = (ms: number) => `${(total / (ms / 1000)).toFixed(1)} MB/s`;
    console.log(`baseline (read + JSON.parse every line)   ${base.toFixed(0).padStart(6)} ms   ${rate(base)}`);
    console.log(`Vox import (fresh database)               ${first.toFixed(0).padStart(6)} ms   ${rate(first)}   ${r.threads} threads, ${r.messages} messages, ${r.toolCalls} tool calls, ${events} events`);
    console.log(`re-import, nothing changed                ${again.toFixed(0).padStart(6)} ms   (${g.files} files, a stat each)`);
    console.log(`re-import, bookkeeping dropped (re-read)  ${reread.toFixed(0).padStart(6)} ms   ${rate(reread)}   (every event found already stored)`);
    console.log(`goal ≥ 50 MB/s: ${total / (first / 1000) >= 50 ? 'met' : 'NOT met'} (import / baseline time ${(first / base).toFixed(2)}×; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
