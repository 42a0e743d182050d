/**
 * Reads of the rate-limit waits table (projected from `run.waitingRateLimit`, `run.rateLimitChanged`,
 * `run.resumed`, `run.ended`; ./projections.ts): a run's current wait, and the waiting runs whose
 * process is gone (to be re-armed by an engine that starts).
 */
import type { SqlDatabase } from './driver';
import type { UsageTotals } from '../../protocol/events';
import { RUN_COLUMNS, type RunRow } from './rows';

export interface WaitRow {
  runId: string; threadId: string; resetAtMs: number; source: 'provider' | 'backoff'; attempt: number; message: string;
  autoResume: boolean; snoozedUntilMs: number | null; resumeRequested: boolean; usageSoFar: UsageTotals; since: number;
}

interface RawWait {
  runId: string; threadId: string; resetAtMs: number; source: 'provider' | 'backoff'; attempt: number; message: string;
  autoResume: number; snoozedUntilMs: number | null; resumeRequested: number; usageSoFar: string; since: number;
}

const WAIT_COLUMNS = `run_id AS runId, thread_id AS threadId, reset_at AS resetAtMs, source, attempt, message, auto_resume AS autoResume,
  snoozed_until AS snoozedUntilMs, resume_requested AS resumeRequested, usage_so_far AS usageSoFar, since`;

function decode(r: RawWait): WaitRow {
  let usage: UsageTotals = { inputTokens: 0, outputTokens: 0 };
  try {
    usage = JSON.parse(r.usageSoFar) as UsageTotals;
  } catch {
    // written by this module as JSON; a damaged value only loses the usage figures
  }
  return { ...r, autoResume: r.autoResume === 1, resumeRequested: r.resumeRequested === 1, usageSoFar: usage };
}

/** The run's wait while it lasts; undefined when it is not waiting. */
export function activeWait(db: SqlDatabase, runId: string): WaitRow | undefined {
  const r = db.prepare(`SELECT ${WAIT_COLUMNS} FROM rate_limit_waits WHERE run_id = ? AND ended_at IS NULL`).get(runId) as RawWait | undefined;
  return r && decode(r);
}

/** Runs listed as running that are waiting for a rate limit (live or orphaned: the caller tells). */
export function waitingRuns(db: SqlDatabase): RunRow[] {
  return db.prepare(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE status = 'running' AND id IN (SELECT run_id FROM rate_limit_waits WHERE ended_at IS NULL)`,
  ).all() as RunRow[];
}
