/**
 * TurnStreamRegistry (SPEC §2.1): owns the live, sequenced chunk stream of every turn — seq
 * allocation, write-through persistence, accumulated text/reasoning, fan-out to subscribers, and
 * the atomic "replay what you missed, then go live" join used by every client (sidebar, editor
 * tab, guest browser, CLI).
 *
 * Why a join is atomic. A turn changes only inside two synchronous blocks: append/end (persist,
 * commit to memory, fan out) and subscribeOrReplay (snapshot, register). Neither awaits, so the
 * event loop cannot run one inside the other: a chunk committed before a join is in its replay,
 * one committed after reaches it live — never both, never neither. Re-entrancy (a subscriber
 * callback that appends, ends or joins while a fan-out is running) is made safe by a per-turn
 * outbox drained in order and a per-subscriber cursor: a subscriber is only ever handed the chunk
 * whose seq is above its cursor, so its stream is gap-free and duplicate-free by construction.
 *
 * If persistence becomes async, keep both blocks synchronous and put the await in front of them,
 * behind a per-turn sequencing lock (a promise chain, i.e. NotT3Chat's SemaphoreSlim(1)):
 *   append: lock(turn, async () => { c = nextSeq(); await persist(c); commitAndFanOut(c) })
 *   join:   lock(turn, async () => { old = await loadAfter(...); snapshotMemoryAndRegister() })
 * Seqs are allocated under the lock, so persists complete in seq order; a chunk becomes visible
 * only in the synchronous commitAndFanOut; and a join that must read the store holds the same
 * lock, so no chunk can be committed between its store read and its registration.
 */
import { CHUNK_KIND_NAMES, type ChunkKind as ProtocolChunkKind } from '../../protocol/chunks';
import { applyRevision, REVISION_KINDS } from '../../protocol/revisions';
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { RunFailure } from '../../protocol/events';

/** The chunk kinds are the protocol's (../../protocol/chunks.ts). */
export type ChunkKind = ProtocolChunkKind;
export interface TurnChunk { turnId: string; seq: number; kind: ChunkKind; data: string }
export type TurnEnd = { status: 'completed' | 'cancelled' | 'failed' | 'interrupted'; error?: string; failure?: RunFailure };
export interface TurnSubscriber { onChunks(chunks: TurnChunk[]): void; onEnd?(end: TurnEnd): void }
/** `ended` is set when the turn had already ended at join time; `onEnd` is then never called. */
export interface Subscription { replay: TurnChunk[]; ended: TurnEnd | null; unsubscribe(): void }

/** Ended turns kept in memory (least recently used dropped first) so a late joiner gets replay + end. */
export const MAX_RETAINED_ENDED_TURNS = 32;
/** Most chunks of one turn held in memory; older ones are replayed through `loadAfter`. */
export const MAX_TURN_CHUNKS_IN_MEMORY = 8_192;
/** Most chunk data of one turn held in memory, counted as UTF-16 bytes (2 per code unit, V8's worst case). */
export const MAX_TURN_BYTES_IN_MEMORY = 1_048_576;
/** Evicted slots at the head of a turn's chunk array before the array is compacted. */
const COMPACT_AFTER_EVICTED_SLOTS = 1_024;

export const CHUNK_KINDS: ReadonlySet<ChunkKind> = new Set<ChunkKind>(CHUNK_KIND_NAMES);
const END_STATUSES: ReadonlySet<string> = new Set(['completed', 'cancelled', 'failed', 'interrupted']);

/**
 * unknownTurn: no such turn in memory (never opened, or ended and dropped from retention);
 * seqAhead: afterSeq is beyond the turn's last seq; ended: open/append/end on a turn that has
 * ended; badSeq: afterSeq is not a non-negative safe integer; evicted: the requested chunks left
 * memory and no `loadAfter` was given; storeGap: `loadAfter` returned chunks that do not continue
 * the sequence; badInput: bad turn id, chunk kind, chunk data or end status; reentrant: `persist`
 * called append/end on the turn it is persisting.
 */
export type StreamErrorCode = ErrorCode<'stream'>;

export class StreamError extends VoxError<'stream'> {
  override readonly name = 'StreamError';
  readonly domain = 'stream' as const;
  constructor(code: StreamErrorCode, message: string, readonly turnId?: string) {
    super(code, message);
  }
}

/** What `loadAfter` returns: the store's rows (kind as stored text; it is validated on load). */
export interface StoredChunk { turnId: string; seq: number; kind: string; data: string }

export interface TurnStreamRegistryOptions {
  /** Write-through, called synchronously before any subscriber sees the chunk. A throw aborts the append. */
  persist?: (chunk: TurnChunk) => void;
  /** Chunks of `turnId` with seq > afterSeq, in order, from the store (used once they left memory). */
  loadAfter?: (turnId: string, afterSeq: number) => readonly StoredChunk[];
  /** Told when a subscriber threw; that subscriber has already been unsubscribed. */
  onSubscriberError?: (error: unknown, turnId: string) => void;
  maxRetainedTurns?: number;
  maxChunksInMemory?: number;
  maxBytesInMemory?: number;
}

interface SubEntry { readonly subscriber: TurnSubscriber; cursor: number; active: boolean }
type OutItem = TurnChunk | { readonly end: TurnEnd };

interface TurnState {
  readonly turnId: string;
  /** chunks[head..] are in memory, contiguous, ending at lastSeq; slots before head are evicted. */
  chunks: TurnChunk[];
  head: number;
  bytes: number;
  lastSeq: number;
  text: string;
  reasoning: string;
  readonly subs: Set<SubEntry>;
  ended: TurnEnd | null;
  readonly outbox: OutItem[];
  draining: boolean;
  persisting: boolean;
}

/** Placeholder left in an evicted slot so its data can be collected before compaction. */
const EVICTED: TurnChunk = Object.freeze({ turnId: '', seq: 0, kind: 'status', data: '' });
const NOOP = (): void => {};

export class TurnStreamRegistry {
  private readonly turns = new Map<string, TurnState>();
  /** Ended turns in least-recently-used-first order. */
  private readonly endedLru = new Map<string, TurnState>();
  private readonly persist: ((chunk: TurnChunk) => void) | undefined;
  private readonly loadAfter: TurnStreamRegistryOptions['loadAfter'];
  private readonly onSubscriberError: TurnStreamRegistryOptions['onSubscriberError'];
  private readonly maxRetained: number;
  private readonly maxChunks: number;
  private readonly maxBytes: number;

  constructor(opts: TurnStreamRegistryOptions = {}) {
    this.persist = opts.persist;
    this.loadAfter = opts.loadAfter;
    this.onSubscriberError = opts.onSubscriberError;
    this.maxRetained = nonNegative(opts.maxRetainedTurns ?? MAX_RETAINED_ENDED_TURNS, 'maxRetainedTurns');
    this.maxChunks = Math.max(1, nonNegative(opts.maxChunksInMemory ?? MAX_TURN_CHUNKS_IN_MEMORY, 'maxChunksInMemory'));
    this.maxBytes = nonNegative(opts.maxBytesInMemory ?? MAX_TURN_BYTES_IN_MEMORY, 'maxBytesInMemory');
  }

  /**
   * Starts a turn's stream. Idempotent while the turn is live; an ended turn cannot reopen.
   * `resume`: a turn whose earlier chunks are persisted (taken over after a restart) continues
   * after `lastSeq`; replays of those come from the store.
   */
  open(turnId: string, resume?: { lastSeq: number; text?: string; reasoning?: string }): void {
    if (typeof turnId !== 'string' || turnId === '') throw new StreamError('badInput', 'turn id must be a non-empty string');
    const t = this.turns.get(turnId);
    if (t?.ended) throw new StreamError('ended', `turn ${turnId} has ended and cannot be reopened`, turnId);
    if (t) return;
    this.turns.set(turnId, {
      turnId, chunks: [], head: 0, bytes: 0, lastSeq: resume?.lastSeq ?? 0, text: resume?.text ?? '', reasoning: resume?.reasoning ?? '',
      subs: new Set(), ended: null, outbox: [], draining: false, persisting: false,
    });
  }

  /** Assigns the next seq, persists, commits to memory and fans out, in that order, synchronously. */
  append(turnId: string, kind: ChunkKind, data: string): TurnChunk {
    const t = this.live(turnId);
    if (!CHUNK_KINDS.has(kind)) throw new StreamError('badInput', `unknown chunk kind ${JSON.stringify(kind)}`, turnId);
    if (typeof data !== 'string') throw new StreamError('badInput', 'chunk data must be a string', turnId);
    if (t.persisting) throw new StreamError('reentrant', `persist() appended to turn ${turnId} while persisting it`, turnId);
    const chunk: TurnChunk = Object.freeze({ turnId, seq: t.lastSeq + 1, kind, data });
    if (this.persist) {
      t.persisting = true;
      try {
        this.persist(chunk); // a throw leaves the turn unchanged: the seq is not consumed
      } finally {
        t.persisting = false;
      }
    }
    t.chunks.push(chunk);
    t.lastSeq = chunk.seq;
    t.bytes += data.length * 2;
    if (kind === 'text') t.text += data;
    else if (kind === 'reasoning') t.reasoning += data;
    else if (REVISION_KINDS.includes(kind)) t.text = applyRevision(t.text, kind, data); // SPEC 3.2: a discarded or salvaged reply
    this.evictOverflow(t);
    t.outbox.push(chunk);
    this.drain(t);
    return chunk;
  }

  /** Ends the turn: subscribers get every pending chunk, then `onEnd`, then are released. */
  end(turnId: string, end: TurnEnd): void {
    const t = this.live(turnId);
    if (!end || !END_STATUSES.has(end.status)) throw new StreamError('badInput', `bad turn end ${JSON.stringify(end)}`, turnId);
    if (t.persisting) throw new StreamError('reentrant', `persist() ended turn ${turnId} while persisting it`, turnId);
    const frozen: TurnEnd = Object.freeze({ status: end.status, ...(end.error !== undefined ? { error: end.error } : {}), ...(end.failure ? { failure: Object.freeze({ ...end.failure }) } : {}) });
    t.ended = frozen;
    t.outbox.push({ end: frozen });
    this.drain(t);
    this.endedLru.set(turnId, t);
    while (this.endedLru.size > this.maxRetained) {
      const oldest = this.endedLru.keys().next().value as string;
      this.endedLru.delete(oldest);
      this.turns.delete(oldest);
    }
  }

  /**
   * Returns every chunk with seq > afterSeq and, if the turn is live, registers `subscriber` for
   * everything after — in one synchronous step (see the header). Errors: unknownTurn, badSeq,
   * seqAhead, evicted, storeGap.
   */
  subscribeOrReplay(turnId: string, afterSeq: number, subscriber: TurnSubscriber): Subscription {
    const t = this.turns.get(turnId);
    if (!t) throw new StreamError('unknownTurn', `no turn stream ${turnId}`, turnId);
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
      throw new StreamError('badSeq', `afterSeq must be a non-negative integer, got ${String(afterSeq)}`, turnId);
    }
    if (afterSeq > t.lastSeq) throw new StreamError('seqAhead', `afterSeq ${afterSeq} is beyond last seq ${t.lastSeq} of turn ${turnId}`, turnId);
    const replay = this.chunksAfter(t, afterSeq);
    if (t.ended) {
      this.touch(t);
      return { replay, ended: t.ended, unsubscribe: NOOP };
    }
    // Cursor = last committed seq: chunks still queued in the outbox are in `replay` and are skipped live.
    const entry: SubEntry = { subscriber, cursor: t.lastSeq, active: true };
    t.subs.add(entry);
    return {
      replay,
      ended: null,
      unsubscribe: () => {
        entry.active = false;
        t.subs.delete(entry);
      },
    };
  }

  accumulated(turnId: string): { text: string; reasoning: string; lastSeq: number } | undefined {
    const t = this.turns.get(turnId);
    if (!t) return undefined;
    if (t.ended) this.touch(t);
    return { text: t.text, reasoning: t.reasoning, lastSeq: t.lastSeq };
  }

  has(turnId: string): boolean {
    return this.turns.has(turnId);
  }

  private live(turnId: string): TurnState {
    const t = this.turns.get(turnId);
    if (!t) throw new StreamError('unknownTurn', `no turn stream ${turnId}; open() it first`, turnId);
    if (t.ended) throw new StreamError('ended', `turn ${turnId} has ended (${t.ended.status})`, turnId);
    return t;
  }

  private touch(t: TurnState): void {
    if (this.endedLru.delete(t.turnId)) this.endedLru.set(t.turnId, t);
  }

  /** Delivers queued items in order. A nested call (from inside a callback) leaves them to the outer loop. */
  private drain(t: TurnState): void {
    if (t.draining) return;
    t.draining = true;
    let i = 0;
    try {
      for (; i < t.outbox.length; i++) {
        const item = t.outbox[i]!;
        if ('end' in item) this.deliverEnd(t, item.end);
        else this.deliverChunk(t, item);
      }
    } finally {
      t.outbox.splice(0, i);
      t.draining = false;
    }
  }

  private deliverChunk(t: TurnState, chunk: TurnChunk): void {
    // Iterating the live set is safe: entries added meanwhile have cursor >= chunk.seq and are skipped.
    for (const s of t.subs) {
      if (!s.active || chunk.seq <= s.cursor) continue;
      s.cursor = chunk.seq;
      try {
        s.subscriber.onChunks([chunk]);
      } catch (err) {
        this.isolate(t, s, err);
      }
    }
  }

  private deliverEnd(t: TurnState, end: TurnEnd): void {
    const subs = [...t.subs];
    t.subs.clear();
    for (const s of subs) {
      if (!s.active) continue;
      s.active = false;
      try {
        s.subscriber.onEnd?.(end);
      } catch (err) {
        this.isolate(t, s, err);
      }
    }
  }

  private isolate(t: TurnState, s: SubEntry, err: unknown): void {
    s.active = false;
    t.subs.delete(s);
    try {
      this.onSubscriberError?.(err, t.turnId);
    } catch {
      // The error reporter itself failing must not reach the producer either.
    }
  }

  private chunksAfter(t: TurnState, afterSeq: number): TurnChunk[] {
    const firstInMemory = t.lastSeq - (t.chunks.length - t.head) + 1;
    if (afterSeq + 1 >= firstInMemory) return t.chunks.slice(t.head + (afterSeq + 1 - firstInMemory));
    if (!this.loadAfter) {
      throw new StreamError('evicted', `chunks ${afterSeq + 1}..${firstInMemory - 1} of turn ${t.turnId} left memory and no store is attached`, t.turnId);
    }
    const stored = this.loadAfter(t.turnId, afterSeq);
    const older: TurnChunk[] = [];
    let expect = afterSeq + 1;
    for (const c of stored) {
      if (c.seq <= afterSeq) continue;
      if (c.seq >= firstInMemory) break;
      if (c.seq !== expect || c.turnId !== t.turnId || !CHUNK_KINDS.has(c.kind as ChunkKind) || typeof c.data !== 'string') {
        throw new StreamError('storeGap', `store returned ${c.turnId}#${c.seq} (${c.kind}) where ${t.turnId}#${expect} was expected`, t.turnId);
      }
      older.push(Object.freeze({ turnId: t.turnId, seq: c.seq, kind: c.kind as ChunkKind, data: c.data }));
      expect++;
    }
    if (expect !== firstInMemory) {
      throw new StreamError('storeGap', `store is missing chunks ${expect}..${firstInMemory - 1} of turn ${t.turnId}`, t.turnId);
    }
    return older.concat(t.chunks.slice(t.head));
  }

  /** Drops the oldest chunks beyond the memory bounds, always keeping the newest one. */
  private evictOverflow(t: TurnState): void {
    while (t.chunks.length - t.head > 1 && (t.chunks.length - t.head > this.maxChunks || t.bytes > this.maxBytes)) {
      t.bytes -= t.chunks[t.head]!.data.length * 2;
      t.chunks[t.head] = EVICTED;
      t.head++;
    }
    if (t.head >= COMPACT_AFTER_EVICTED_SLOTS && t.head >= t.chunks.length - t.head) {
      t.chunks = t.chunks.slice(t.head);
      t.head = 0;
    }
  }
}

function nonNegative(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new StreamError('badInput', `${name} must be a non-negative integer, got ${String(n)}`);
  return n;
}
