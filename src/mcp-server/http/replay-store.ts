/**
 * The DPoP `jti` store (RFC 9449 §11.1): every proof accepted is remembered, per key thumbprint,
 * until its `iat` window has passed and a replay of it would be refused as stale anyway. Nothing
 * live is ever evicted to make room, so no flood of other proofs can make a used one acceptable
 * again: when the store is full, new proofs are refused (`dpopStoreFull`, with the seconds until
 * the soonest entry expires) instead. Each key may hold at most DPOP_KEY_MAX_LIVE live proofs —
 * a per-client rate limit (`dpopRateLimited`, with the seconds until that key's soonest entry
 * expires). Expired entries are dropped as the clock passes them (a min-heap on expiry), so
 * memory is bounded by `maxEntries` and the work per proof by log(maxEntries).
 */
import { McpServerError } from './errors';

/** Most live jti entries over all keys; beyond it new proofs get 503 (≈ 0.5 KiB each at worst: 25 MiB). */
export const DPOP_JTI_STORE_MAX = 50_000;
/** Most live proofs one key (RFC 7638 thumbprint) may have in the store; beyond it its proofs get 429. */
export const DPOP_KEY_MAX_LIVE = 3_000;
/**
 * Shortest time (ms) an entry is kept, whatever its `iat`: a proof back-dated to the edge of the
 * window would otherwise leave the store (and the key's rate count) at once.
 */
export const DPOP_MIN_KEEP_MS = 60_000;

export interface ReplayLimits {
  /** Most live entries over all keys. */
  maxEntries: number;
  /** Most live entries of one key. */
  perKey: number;
}

interface Entry {
  /** When the entry may be forgotten (ms). */
  expires: number;
  jkt: string;
  jti: string;
}

/** Seconds from `now` to `at`, at least 1 (a Retry-After value). */
const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

export class JtiReplayStore {
  /** Per key thumbprint: its live jti values and when each expires. */
  private readonly byKey = new Map<string, Map<string, number>>();
  /** Every live entry, soonest expiry on top. */
  private readonly heap: Entry[] = [];
  readonly limits: ReplayLimits;

  constructor(limits: Partial<ReplayLimits> = {}) {
    this.limits = { maxEntries: limits.maxEntries ?? DPOP_JTI_STORE_MAX, perKey: limits.perKey ?? DPOP_KEY_MAX_LIVE };
  }

  get size(): number {
    return this.heap.length;
  }

  has(jkt: string, jti: string): boolean {
    return this.byKey.get(jkt)?.has(jti) ?? false;
  }

  /**
   * Admits the proof `jti` of key `jkt`, to be kept until `expires` (ms; at least DPOP_MIN_KEEP_MS
   * from `now`). Throws dpopReplay for one already held, dpopRateLimited when the key has too many
   * live proofs, dpopStoreFull when the store is full; `details.retryAfterS` says when to retry.
   */
  admit(jkt: string, jti: string, expires: number, now: number): void {
    this.expire(now);
    const mine = this.byKey.get(jkt);
    if (mine?.has(jti)) throw new McpServerError('dpopReplay', 'DPoP proof replayed (jti already used)');
    if (mine && mine.size >= this.limits.perKey) {
      let soonest = Infinity;
      for (const at of mine.values()) soonest = Math.min(soonest, at);
      throw new McpServerError('dpopRateLimited', `too many DPoP proofs from this key (${this.limits.perKey} in their window); retry later`, { retryAfterS: secondsUntil(soonest, now) });
    }
    if (this.heap.length >= this.limits.maxEntries) {
      throw new McpServerError('dpopStoreFull', 'the server is busy (too many recent DPoP proofs); retry later', { retryAfterS: secondsUntil(this.heap[0]!.expires, now) });
    }
    const at = Math.max(expires, now + DPOP_MIN_KEEP_MS);
    if (mine) mine.set(jti, at);
    else this.byKey.set(jkt, new Map([[jti, at]]));
    this.push({ expires: at, jkt, jti });
  }

  /** Drops every entry whose time has come. */
  expire(now: number): void {
    while (this.heap.length > 0 && this.heap[0]!.expires <= now) {
      const e = this.pop();
      const mine = this.byKey.get(e.jkt);
      mine?.delete(e.jti);
      if (mine?.size === 0) this.byKey.delete(e.jkt);
    }
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (h[p]!.expires <= h[i]!.expires) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.expires < h[m]!.expires) m = l;
        if (r < h.length && h[r]!.expires < h[m]!.expires) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** The HTTP answer to a proof the store could not take now (429 for a key over its rate, 503 for a full store); undefined for any other failure. */
export function busyAnswer(e: unknown): { status: 429 | 503; message: string; retryAfterS: number } | undefined {
  if (!(e instanceof McpServerError) || (e.code !== 'dpopRateLimited' && e.code !== 'dpopStoreFull')) return undefined;
  const retryAfterS = typeof e.details?.retryAfterS === 'number' ? e.details.retryAfterS : 1;
  return { status: e.code === 'dpopRateLimited' ? 429 : 503, message: e.message, retryAfterS };
}
