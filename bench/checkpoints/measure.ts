/**
 * bench/checkpoints.ts, measuring: the bench's own git runner (async, so a timed run is wall time
 * as a caller sees it), timing and medians, disk accounting (`du`-style block counts, `count-objects
 * -v`), the table rows, GIT_TRACE2_EVENT tracing (git processes started and the time spent inside
 * git, per subcommand) and the Meter that keeps tracing and disk accounting out of timed runs.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

/** Untimed warm-up rounds before the timed ones (page cache, lazy code); they are also the probe runs (trace, disk). */
export const WARMUP_ROUNDS = 1;
/** Largest stdout accepted from one git call here. */
export const GIT_MAX_BUFFER_BYTES = 256 * 1024 * 1024;

export interface GitOut {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs git (no shell) and resolves with its output; rejects unless the exit code is in `ok`. */
export function git(cwd: string, args: string[], ok: number[] = [0]): Promise<GitOut> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: process.env, maxBuffer: GIT_MAX_BUFFER_BYTES, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (ok.includes(code)) resolve({ stdout, stderr, code });
      else reject(new Error(`git ${args.join(' ')} (in ${cwd}) exited ${code}: ${stderr.trim().slice(0, 800)}`));
    });
  });
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export function median(xs: number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Disk used by everything under `dir` (allocated blocks, like `du`). */
export function diskUsage(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      total += st.blocks * 512;
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return total;
}

/** Loose + packed object bytes and counts of a repository (`count-objects -v`). */
export async function objectStats(repo: string): Promise<{ bytes: number; count: number }> {
  const out = (await git(repo, ['count-objects', '-v'])).stdout;
  const field = (k: string): number => Number(new RegExp(`^${k}: (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
  return { bytes: (field('size') + field('size-pack')) * 1024, count: field('count') + field('in-pack') };
}

// ---------------------------------------------------------------------------------------------
// Rows and traces
// ---------------------------------------------------------------------------------------------

export interface Row {
  label: string;
  /** Wall times of the timed runs (ms). */
  samples: number[];
  /** From the probe run: git processes started, and the sum of their own run times (ms). */
  procs?: number;
  gitMs?: number;
  /** From the probe run: git subcommands with their count and summed run time. */
  calls?: Map<string, { n: number; ms: number }>;
  /** Bytes the probe run added (NaN: not measured). */
  disk: number;
  diskWhere: DiskWhere | '';
  note: string;
}

/** Where a row's "disk added" is measured: the user's repository's objects, or the shadow git dir. */
export type DiskWhere = 'user repo' | 'shadow dir';

export function row(label: string, diskWhere: DiskWhere | '' = ''): Row {
  return { label, samples: [], disk: Number.NaN, diskWhere, note: '' };
}

interface Trace {
  procs: number;
  gitMs: number;
  calls: Map<string, { n: number; ms: number }>;
}

/** The git subcommand in an argv (skips `-c k=v`, `--git-dir X` and other global options). */
function subcommand(argv: string[]): string {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-c' || a === '-C' || a === '--git-dir' || a === '--work-tree') i++;
    else if (!a.startsWith('-')) return a;
  }
  return '?';
}

/**
 * Runs `fn` with GIT_TRACE2_EVENT writing to `file`, then counts the git processes this process
 * started (sids without a parent; git's own children, e.g. the `status` that `add` runs inside a
 * nested repository, are part of their parent's time) and sums their run times as git measured
 * them, per subcommand.
 */
export async function traced<T>(file: string, fn: () => Promise<T>): Promise<{ ms: number; value: T } & Trace> {
  process.env.GIT_TRACE2_EVENT = file;
  let t: { ms: number; value: T };
  try {
    t = await timed(fn);
  } finally {
    delete process.env.GIT_TRACE2_EVENT;
  }
  const names = new Map<string, string>();
  const calls = new Map<string, { n: number; ms: number }>();
  let procs = 0;
  let gitMs = 0;
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { event?: string; sid?: string; argv?: string[]; t_abs?: number };
    if (!e.sid || e.sid.includes('/')) continue;
    if (e.event === 'start' && e.argv) names.set(e.sid, subcommand(e.argv));
    if (e.event === 'atexit' && typeof e.t_abs === 'number') {
      const ms = e.t_abs * 1000;
      procs++;
      gitMs += ms;
      const name = names.get(e.sid) ?? '?';
      const c = calls.get(name) ?? { n: 0, ms: 0 };
      c.n++;
      c.ms += ms;
      calls.set(name, c);
    }
  }
  return { ...t, procs, gitMs, calls };
}

/**
 * Timed runs only run the clock. The probe run (the untimed warm-up) is traced and measured for
 * disk instead, so neither tracing nor `count-objects`/`du` ever sits in a timed run.
 */
export class Meter {
  private traceSeq = 0;

  /** `diskOf(where)`: the bytes on disk a row's "disk added" is the growth of. */
  constructor(
    private readonly tmp: string,
    private readonly diskOf: (where: DiskWhere) => Promise<number>,
  ) {}

  /** A fresh GIT_TRACE2_EVENT file in the temp dir. */
  traceFile(): string {
    return path.join(this.tmp, `trace2-${++this.traceSeq}.json`);
  }

  async measure<T>(rw: Row, timedRun: boolean, fn: () => Promise<T>): Promise<T> {
    if (timedRun) {
      const t = await timed(fn);
      rw.samples.push(t.ms);
      return t.value;
    }
    const before = rw.diskWhere ? await this.diskOf(rw.diskWhere) : Number.NaN;
    const t = await traced(this.traceFile(), fn);
    Object.assign(rw, { procs: t.procs, gitMs: t.gitMs, calls: t.calls });
    if (rw.diskWhere) rw.disk = (await this.diskOf(rw.diskWhere)) - before;
    return t.value;
  }
}
