/**
 * bench/checkpoints.ts, reporting: number formats, the table (median and range of the timed runs,
 * × git status, and from the probe run: git processes, time inside git, disk added), the git calls
 * of the Vox rows, the warm-index and repository sizes, the goal lines (within 1.3× of status, no
 * full copy on disk, changedPaths capture < 0.5× status) and background pack consolidation.
 * Reports only: no asserts on timings.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PACK_CONSOLIDATE_THRESHOLD, packMaintenanceStats } from '../../src/engine/checkpoints/git-checkpoints';
import { median, WARMUP_ROUNDS, type Row } from './measure';
import type { PeerRows } from './peer-rows';
import type { VoxRows } from './vox-rows';

/** Goal: any Vox capture within this multiple of `git status`. */
const GOAL_CAPTURE_VS_STATUS = 1.3;
/** Stretch goal: a changedPaths capture under this multiple of `git status`. */
const GOAL_FAST_CAPTURE_VS_STATUS = 0.5;
/** "No full copy on disk": a checkpoint may add at most this share of the repository's bytes. */
const GOAL_MAX_DISK_SHARE = 0.01;

export const fmtMs = (ms: number): string => (Number.isNaN(ms) ? '—' : ms < 100 ? ms.toFixed(1) : String(Math.round(ms)));
export const fmtRatio = (r: number): string => (Number.isNaN(r) ? '—' : `${r < 10 ? r.toFixed(2) : r.toFixed(1)}×`);
export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export function fmtBytes(bytes: number): string {
  if (Number.isNaN(bytes)) return '—';
  const sign = bytes < 0 ? '-' : '+';
  const b = Math.abs(bytes);
  if (b >= 1024 * 1024) return `${sign}${(b / 1024 / 1024).toFixed(1)} MiB`;
  return `${sign}${(b / 1024).toFixed(b < 10 * 1024 ? 1 : 0)} KiB`;
}
export const loadAvg = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');

export interface ReportInput {
  root: string;
  vox: VoxRows;
  peers: PeerRows;
  /** Bytes of the warm index files and of the real index. */
  warm: number;
  realIndex: number;
  trackedBytes: number;
  repoObjectBytes: number;
  /** "N s" since the run started. */
  elapsed: () => string;
}

/** Prints the table, the notes under it, the goal lines and the pack-consolidation line. */
export function printReport(r: ReportInput): void {
  const { vox, peers } = r;
  const statusMs = median(peers.status.samples);
  const rows: Row[] = [
    peers.spawnFloor, peers.status, vox.first, vox.prepare, vox.full, peers.plain, vox.fast, peers.readTree,
    peers.shadowFirst, peers.shadowNext, peers.stash, vox.restore, vox.undo, peers.shadowRestore, peers.shadowBack,
  ];
  const W = Math.max(...rows.map((rw) => rw.label.length));
  const cols = (a: string, b: string, c2: string, d: string, e: string, f: string, g2: string, h: string): string =>
    `${a.padEnd(W)}  ${b.padStart(9)}  ${c2.padStart(13)}  ${d.padStart(8)}  ${e.padStart(5)}  ${f.padStart(8)}  ${g2.padEnd(24)}  ${h}`;
  const header = cols('approach', 'median ms', 'min–max ms', '× status', 'procs', 'in git', 'disk added', 'notes');
  console.log('');
  console.log(header);
  console.log('-'.repeat(header.length + 20));
  for (const rw of rows) {
    const m = median(rw.samples);
    const range = rw.samples.length ? `${fmtMs(Math.min(...rw.samples))}–${fmtMs(Math.max(...rw.samples))}` : '—';
    const disk = Number.isNaN(rw.disk) ? '—' : `${fmtBytes(rw.disk)} (${rw.diskWhere})`;
    console.log(cols(rw.label, fmtMs(m), range, fmtRatio(m / statusMs), rw.procs === undefined ? '—' : String(rw.procs), rw.gitMs === undefined ? '—' : fmtMs(rw.gitMs), disk, rw.note));
  }
  console.log('');
  console.log('median/min–max: wall time of the timed runs, as the caller sees it. procs / in git / disk added: from one untimed probe run —');
  console.log('  git processes started, the sum of their run times as git measured them (GIT_TRACE2_EVENT; parallel calls overlap;');
  console.log('  the rest of the wall time is process start-up and the caller\'s own work), and the bytes it added.');
  for (const rw of [vox.full, vox.fast, vox.restore]) {
    if (!rw.calls) continue;
    const parts = [...rw.calls.entries()].sort((a, b) => b[1].ms - a[1].ms).map(([name, v]) => `${name}${v.n > 1 ? ` ×${v.n}` : ''} ${fmtMs(v.ms)}`);
    console.log(`${rw.label.slice(3)}, git calls (ms in git): ${parts.join(', ')}`);
  }
  console.log(
    `Vox also keeps one warm index per worktree: ${fmtBytes(r.warm).slice(1)} (a copy of the ${fmtBytes(r.realIndex).slice(1)} real index, replaced by every capture, not one per checkpoint). ` +
      `Repository: ${(r.trackedBytes / 1024 / 1024).toFixed(1)} MiB tracked, ${fmtBytes(r.repoObjectBytes).slice(1)} of objects.`,
  );
  printGoals(r, statusMs);
}

/** The goal lines, the pack-consolidation line and the closing load line. */
function printGoals(r: ReportInput, statusMs: number): void {
  const { vox, peers } = r;
  const fullRatio = median(vox.full.samples) / statusMs;
  const fastRatio = median(vox.fast.samples) / statusMs;
  const worstRatio = Math.max(fullRatio, fastRatio);
  const voxDisk = Math.max(vox.full.disk, vox.fast.disk);
  const diskShare = voxDisk / r.trackedBytes;
  const mark = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  console.log('');
  console.log('Goal: Vox within 1.3× of git status on any checkpoint; no full copy on disk; changedPaths capture < 0.5× status');
  const firstRatio = median(vox.first.samples) / statusMs;
  console.log(
    `  within 1.3×:   full capture ${fmtRatio(fullRatio)}, changedPaths capture ${fmtRatio(fastRatio)} → ${mark(worstRatio <= GOAL_CAPTURE_VS_STATUS)} for every capture once the warm state exists ` +
      `(the agent loop builds it in the background when a turn starts and after a restore: ${fmtMs(median(vox.prepare.samples))} ms); ` +
      `a capture that has to build it itself (a full snapshot) ${fmtRatio(firstRatio)} → ${mark(firstRatio <= GOAL_CAPTURE_VS_STATUS)} ` +
      `(${vox.full.procs ?? '?'} and ${vox.fast.procs ?? '?'} git processes, started by a helper process; "in git" counts fast-import from its start, while it waits for its input)`,
  );
  console.log(
    `  no full copy:  Vox adds ${fmtBytes(voxDisk)} per checkpoint (${(diskShare * 100).toFixed(3)}% of the tracked bytes; + one ${fmtBytes(r.warm).slice(1)} warm index per worktree) ` +
      `vs ${fmtBytes(peers.shadowFirst.disk)} for the shadow repo's first checkpoint → ${mark(diskShare <= GOAL_MAX_DISK_SHARE)}`,
  );
  console.log(`  < 0.5× status: changedPaths capture ${fmtRatio(fastRatio)} (${fmtMs(median(vox.fast.samples))} ms vs ${fmtMs(statusMs)} ms) → ${mark(fastRatio < GOAL_FAST_CAPTURE_VS_STATUS)}`);
  const maint = packMaintenanceStats();
  const voxCaptures = vox.full.samples.length + vox.fast.samples.length + 2 * WARMUP_ROUNDS;
  const packs = fs.readdirSync(path.join(r.root, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack')).length;
  console.log(
    `Pack consolidation (background \`repack --geometric\` once over ${PACK_CONSOLIDATE_THRESHOLD} packs; not in the capture timings): ${maint.runs} run(s), ${fmtMs(maint.totalMs)} ms in all ` +
      `(${fmtMs(maint.totalMs / Math.max(1, voxCaptures))} ms per incremental capture); ${packs} pack(s) in the repository now.`,
  );
  console.log(`load average at end: ${loadAvg()} (${os.cpus().length} cores); total ${r.elapsed()}`);
}
