/**
 * Rate-limit recovery (SPEC 2.4). When a model call is refused for a rate limit, the run does
 * not fail: `planRateLimitWait` decides how long to wait — until the reset the provider gave
 * (`Retry-After`, `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`, body hints; parsed in
 * ../providers/provider-errors.ts), or exponential backoff with jitter when it gave none — and
 * `RateLimitWaits` records the wait (`run.waitingRateLimit`) and waits it out on the engine's
 * clock, honouring Resume now, Snooze and auto-resume off. The agent loop then retries the same
 * model call, so nothing that already ran is repeated. A quota that will not come back by
 * waiting (billing, credit) or a reset too far away is a clear failure instead.
 *
 * The wait lives in the store, so it survives a restart: an engine that starts re-arms the waits
 * whose process is gone (./registry.ts `resumeOrphans`). Controls from another process land in
 * the store too; the waiting process reads them every `WAIT_POLL_MS`.
 */
import { ProviderError } from '../providers/types';
import type { UsageTotals } from '../../protocol/events';
import type { VoxStore, WaitRow } from '../store/store';
import { RunError } from './errors';

/** First backoff delay when the provider gave no reset time. */
export const BACKOFF_BASE_MS = 2_000;
/** Longest backoff delay. */
export const BACKOFF_CAP_MS = 5 * 60_000;
/** A reset further away than this is reported as a failure rather than waited for. */
export const MAX_RATE_LIMIT_WAIT_MS = 6 * 3_600_000;
/** Most rate-limit waits one run goes through before it fails (a limit that never lets up). */
export const MAX_WAITS_PER_RUN = 30;
/** Waited past the announced reset, so the retry does not land a hair before it. */
export const RESET_MARGIN_MS = 500;
/** How often a waiting run reads its wait back from the store (controls sent from another process). */
export const WAIT_POLL_MS = 2_000;
/** Longest snooze. */
export const MAX_SNOOZE_MS = 24 * 3_600_000;

/** Time as the engine sees it; tests inject a manual clock. */
export interface EngineClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: EngineClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export type WaitPlan =
  | { kind: 'wait'; resetAtMs: number; source: 'provider' | 'backoff'; message: string }
  | { kind: 'fail'; error: ProviderError };

/** Backoff before attempt `attempt` (0-based): doubling from the base, capped, with jitter in [½, 1]. */
export function backoffMs(attempt: number, random: () => number): number {
  const raw = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30));
  return Math.round(raw * (0.5 + random() / 2));
}

/** What to do about a failed model call: wait (and retry), fail, or null when it is not a rate limit. */
export function planRateLimitWait(err: unknown, attempt: number, now: number, random: () => number): WaitPlan | null {
  if (!(err instanceof ProviderError) || err.code !== 'rateLimited') return null;
  if (attempt >= MAX_WAITS_PER_RUN) {
    return { kind: 'fail', error: new ProviderError('rateLimited', `${err.message} (still rate limited after ${MAX_WAITS_PER_RUN} waits; giving up)`) };
  }
  const reset = err.details.resetAtMs;
  if (reset !== undefined) {
    if (reset - now > MAX_RATE_LIMIT_WAIT_MS) {
      return { kind: 'fail', error: new ProviderError('rateLimited', `${err.message} (the limit resets at ${new Date(reset).toISOString()}, more than ${MAX_RATE_LIMIT_WAIT_MS / 3_600_000} h away; not waiting)`) };
    }
    return { kind: 'wait', resetAtMs: Math.max(now, reset) + RESET_MARGIN_MS, source: 'provider', message: err.message };
  }
  return { kind: 'wait', resetAtMs: now + backoffMs(attempt, random), source: 'backoff', message: err.message };
}

export interface WaitSpec {
  threadId: string;
  runId: string;
  resetAtMs: number;
  source: 'provider' | 'backoff';
  attempt: number;
  message: string;
  usageSoFar: UsageTotals;
}

/** A wait's schedule as clients see it. */
export interface WaitView { resetAtMs: number; autoResume: boolean; snoozedUntilMs: number | null; attempt: number; source: 'provider' | 'backoff'; message: string }

export function waitView(w: WaitRow): WaitView {
  return { resetAtMs: w.resetAtMs, autoResume: w.autoResume, snoozedUntilMs: w.snoozedUntilMs, attempt: w.attempt, source: w.source, message: w.message };
}

class Cancelled extends Error {}

export class RateLimitWaits {
  /** Wakes a waiting run of this process at once (a control changed its wait). */
  private readonly pokes = new Map<string, () => void>();

  constructor(private readonly deps: { store: VoxStore; clock: EngineClock }) {}

  get clock(): EngineClock {
    return this.deps.clock;
  }

  /** Records a new wait and waits it out; rejects with 'cancelled' when the run is stopped. */
  async wait(spec: WaitSpec, signal: AbortSignal): Promise<'timer' | 'user'> {
    this.deps.store.append({
      type: 'run.waitingRateLimit', threadId: spec.threadId, runId: spec.runId, resetAtMs: Math.round(spec.resetAtMs), source: spec.source,
      attempt: spec.attempt, message: spec.message, autoResume: true, snoozedUntilMs: null, usageSoFar: spec.usageSoFar,
    });
    return this.waitOut(spec.threadId, spec.runId, signal);
  }

  /** Waits out the run's recorded wait (also one re-armed after a restart); `run.resumed` when it is over. */
  async waitOut(threadId: string, runId: string, signal: AbortSignal): Promise<'timer' | 'user'> {
    const { store, clock } = this.deps;
    for (;;) {
      if (signal.aborted) throw new Cancelled('cancelled');
      const w = store.rateLimitWait(runId);
      if (!w) return 'user'; // resumed by another process's engine
      const by = w.resumeRequested ? 'user' : w.autoResume && clock.now() >= Math.max(w.resetAtMs, w.snoozedUntilMs ?? 0) ? 'timer' : null;
      if (by) {
        store.append({ type: 'run.resumed', threadId, runId, by });
        return by;
      }
      const due = w.autoResume ? Math.max(w.resetAtMs, w.snoozedUntilMs ?? 0) - clock.now() : Infinity;
      await this.sleep(runId, Math.min(due, WAIT_POLL_MS), signal);
    }
  }

  /** Resume now: the waiting run retries at once. */
  resumeNow(runId: string): WaitRow {
    return this.change(runId, () => ({ resumeRequested: true }));
  }

  /** Snooze: no automatic resume before `forMs` from now (auto-resume turns back on). */
  snooze(runId: string, forMs: number): WaitRow {
    const until = this.deps.clock.now() + Math.min(Math.max(0, forMs), MAX_SNOOZE_MS);
    return this.change(runId, () => ({ snoozedUntilMs: until, autoResume: true }));
  }

  /** Auto-resume off: the run waits until Resume now (or Stop); on: it resumes at the reset (or the snooze's end). */
  setAutoResume(runId: string, autoResume: boolean): WaitRow {
    return this.change(runId, () => ({ autoResume }));
  }

  private change(runId: string, patch: (w: WaitRow) => Partial<Pick<WaitRow, 'autoResume' | 'snoozedUntilMs' | 'resumeRequested'>>): WaitRow {
    const { store } = this.deps;
    const w = store.rateLimitWait(runId);
    if (!w) throw new RunError('notWaiting', `run ${runId} is not waiting for a rate limit`);
    const next = { ...w, ...patch(w) };
    store.append({ type: 'run.rateLimitChanged', threadId: w.threadId, runId, autoResume: next.autoResume, snoozedUntilMs: next.snoozedUntilMs, resumeRequested: next.resumeRequested });
    this.pokes.get(runId)?.();
    return next;
  }

  private sleep(runId: string, ms: number, signal: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clock.clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pokes.delete(runId);
      };
      const onAbort = () => {
        done();
        reject(new Cancelled('cancelled'));
      };
      const timer = clock.setTimeout(() => {
        done();
        resolve();
      }, Math.max(0, ms));
      this.pokes.set(runId, () => {
        done();
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Whether an error is the cancellation of a wait (the run was stopped while it waited). */
export function isWaitCancelled(e: unknown): boolean {
  return e instanceof Cancelled;
}
