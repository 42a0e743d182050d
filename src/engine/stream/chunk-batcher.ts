/**
 * ChunkBatcher: owns the outbound pacing of one client's turn stream. It is a TurnSubscriber that
 * coalesces incoming chunks and hands them to the client's sink at most once per
 * BATCH_INTERVAL_MS (sooner when BATCH_MAX_BYTES of data is pending, and at once on turn end).
 * Adjacent text (or reasoning) chunks of one turn with consecutive seqs merge into one chunk that
 * carries the LAST seq, so a client that reconnects resumes with `afterSeq = last seq it saw`.
 * Tool calls, tool results and status chunks are never merged. Data is only concatenated, never
 * cut, so surrogate pairs split across provider deltas are rejoined, not broken.
 */
import { StreamError, type ChunkKind, type TurnChunk, type TurnEnd, type TurnSubscriber } from './turn-stream-registry';

/** Flush cadence: ~30 messages/s, faster than reading speed needs, slow enough to coalesce tokens. */
export const BATCH_INTERVAL_MS = 33;
/** Pending chunk data (UTF-8 bytes) that triggers an immediate flush, so one message stays small. */
export const BATCH_MAX_BYTES = 32_768;

/** Kinds whose adjacent chunks are one continuous text and may be merged. */
const MERGEABLE: ReadonlySet<ChunkKind> = new Set<ChunkKind>(['text', 'reasoning']);

export interface BatchTimer {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface BatchSink {
  sendChunks(chunks: TurnChunk[]): void;
  sendEnd?(end: TurnEnd): void;
}

export interface ChunkBatcherOptions {
  timer?: BatchTimer;
  intervalMs?: number;
  maxBytes?: number;
  /** Receives a sink failure during a timer-driven flush (there is no caller to throw to). */
  onError?: (error: unknown) => void;
}

const realTimer: BatchTimer = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class ChunkBatcher implements TurnSubscriber {
  private pending: TurnChunk[] = [];
  private pendingBytes = 0;
  private timerHandle: unknown = undefined;
  private timerArmed = false;
  private closed = false;
  private lastSent = 0;
  private readonly timer: BatchTimer;
  private readonly intervalMs: number;
  private readonly maxBytes: number;
  private readonly onError: ((error: unknown) => void) | undefined;

  constructor(private readonly sink: BatchSink, opts: ChunkBatcherOptions = {}) {
    this.timer = opts.timer ?? realTimer;
    this.intervalMs = opts.intervalMs ?? BATCH_INTERVAL_MS;
    this.maxBytes = opts.maxBytes ?? BATCH_MAX_BYTES;
    this.onError = opts.onError;
    if (!(this.intervalMs >= 0) || !(this.maxBytes > 0)) {
      throw new StreamError('badInput', `bad batcher limits: intervalMs=${this.intervalMs}, maxBytes=${this.maxBytes}`);
    }
  }

  /** Highest seq handed to the sink so far (0 before the first flush): the client's resume point. */
  get lastSentSeq(): number {
    return this.lastSent;
  }

  /** Chunks waiting for the next flush (merged ones count once). */
  get pendingCount(): number {
    return this.pending.length;
  }

  onChunks(chunks: TurnChunk[]): void {
    if (this.closed) throw new StreamError('ended', 'chunk batcher is closed');
    for (const c of chunks) {
      this.add(c);
      if (this.pendingBytes >= this.maxBytes) this.flush();
    }
    if (this.pending.length > 0 && !this.timerArmed) {
      this.timerArmed = true;
      this.timerHandle = this.timer.setTimeout(() => this.onTimer(), this.intervalMs);
    }
  }

  /** Sends whatever is pending, then the end; the batcher accepts nothing afterwards. */
  onEnd(end: TurnEnd): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.sink.sendEnd?.(end);
  }

  /** Sends pending chunks now (no-op when there are none). */
  flush(): void {
    this.disarm();
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.sink.sendChunks(batch);
    this.lastSent = batch[batch.length - 1]!.seq; // only once the sink took it
  }

  /** The client went away: drop what is pending and stop the timer. */
  dispose(): void {
    this.closed = true;
    this.disarm();
    this.pending = [];
    this.pendingBytes = 0;
  }

  private add(c: TurnChunk): void {
    const last = this.pending[this.pending.length - 1];
    if (last && MERGEABLE.has(c.kind) && c.kind === last.kind && c.turnId === last.turnId && c.seq === last.seq + 1) {
      this.pending[this.pending.length - 1] = { turnId: c.turnId, seq: c.seq, kind: c.kind, data: last.data + c.data };
    } else {
      this.pending.push(c);
    }
    this.pendingBytes += Buffer.byteLength(c.data, 'utf8');
  }

  private onTimer(): void {
    this.timerArmed = false;
    this.timerHandle = undefined;
    try {
      this.flush();
    } catch (err) {
      this.dispose(); // the sink is broken; stop rather than fail again every interval
      if (this.onError) this.onError(err);
      else throw err;
    }
  }

  private disarm(): void {
    if (!this.timerArmed) return;
    this.timer.clearTimeout(this.timerHandle);
    this.timerArmed = false;
    this.timerHandle = undefined;
  }
}
