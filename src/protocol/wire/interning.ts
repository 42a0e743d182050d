/**
 * Wire compression for snapshots and event batches sent to clients (SPEC §1.3).
 *
 * Id interning: `internRecordIds(payload)` returns a copy of a JSON payload in which every id
 * "slot" — the value of a key `id`, `*_id` or `*Id`, or an element of an array under a key
 * `*_ids` or `*Ids` — holding a string is replaced by its index in a shared `ids` table (the same
 * string always gets the same index, so long derived ids are sent once). `expandRecordIds`
 * restores the payload exactly. Non-string slot values are handled losslessly: a number becomes
 * its decimal string (interned slots only ever hold numbers, so a string there unambiguously
 * means "this was a number"; -0 comes back as 0, as it would through JSON); `null`, booleans, objects and arrays are left in place (objects and
 * arrays are walked like any other value). Keys are matched case-sensitively and exactly as the
 * spec says: `valid`, `ids` or `identity` are not id keys. Inputs are never mutated.
 *
 * Body dedupe: `LiveBodyDeduper` remembers, per subscription, the xxh64 of the last body sent for
 * each (item, field) — up to LIVE_DEDUPE_MEMORY of them, least recently sent evicted first. A
 * re-sent identical body is removed from the item and flagged `textOmitted` / `filesOmitted` /
 * `promptOmitted` / `resultOmitted`. Call it only for messages actually sent on that subscription,
 * in send order, and `reset()` it when the client reconnects without its state.
 */
import { VoxError, type ErrorCode } from './vox-error';
import xxhash from 'xxhash-wasm';

/** Payloads nested deeper than this are refused (guards the recursion; JSON has no cycles). */
export const MAX_WIRE_DEPTH = 512;

/** Bodies remembered per subscription (SPEC §1.3). */
export const LIVE_DEDUPE_MEMORY = 32;

export type WireInterningErrorCode = ErrorCode<'interning'>;

export class WireInterningError extends VoxError<'interning'> {
  override readonly name = 'WireInterningError';
  readonly domain = 'interning' as const;
  constructor(
    code: WireInterningErrorCode,
    message: string,
  ) {
    super(code, message);
  }
}

/** `id`, `*_id`, `*Id`: a single id. */
export function isIdKey(key: string): boolean {
  return key === 'id' || key.endsWith('_id') || key.endsWith('Id');
}

/** `*_ids`, `*Ids`: an array of ids. */
export function isIdListKey(key: string): boolean {
  return key.endsWith('_ids') || key.endsWith('Ids');
}

/** Maps one id slot; `where` formats the slot's path, only needed for error messages. */
type SlotMapper = (value: string | number, where: () => string) => unknown;

/** Copies a JSON value, passing every string or number id slot through `slot`. */
function mapIdSlots(root: unknown, slot: SlotMapper): unknown {
  const path: (string | number)[] = []; // current location, formatted only on error
  const where = () => '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');

  const inSlot = (value: unknown): unknown =>
    typeof value === 'string' || typeof value === 'number' ? slot(value, where) : walk(value);

  const walk = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (path.length >= MAX_WIRE_DEPTH) {
      throw new WireInterningError('tooDeep', `payload nested deeper than ${MAX_WIRE_DEPTH} at ${where()}`);
    }
    if (Array.isArray(value)) {
      return value.map((el: unknown, i) => {
        path.push(i);
        const out = walk(el);
        path.pop();
        return out;
      });
    }
    const entries: [string, unknown][] = [];
    for (const [key, child] of Object.entries(value)) {
      path.push(key);
      if (isIdKey(key)) {
        entries.push([key, inSlot(child)]);
      } else if (isIdListKey(key) && Array.isArray(child)) {
        entries.push([
          key,
          child.map((el: unknown, i) => {
            path.push(i);
            const out = inSlot(el);
            path.pop();
            return out;
          }),
        ]);
      } else {
        entries.push([key, walk(child)]);
      }
      path.pop();
    }
    // fromEntries defines own properties, so a `__proto__` key stays data.
    return Object.fromEntries(entries);
  };

  return walk(root);
}

export interface InternedPayload<P = unknown> {
  /** The payload with id slots replaced by indices into `ids`. */
  payload: P;
  /** Distinct ids in order of first appearance. */
  ids: string[];
}

export function internRecordIds(payload: unknown): InternedPayload {
  const ids: string[] = [];
  const index = new Map<string, number>();
  const out = mapIdSlots(
    payload,
    (value) => {
      if (typeof value === 'number') return String(value);
      const s = value as string;
      let i = index.get(s);
      if (i === undefined) {
        i = ids.length;
        ids.push(s);
        index.set(s, i);
      }
      return i;
    },
  );
  return { payload: out, ids };
}

/** Inverse of `internRecordIds`; throws `WireInterningError` on an index outside `ids`. */
export function expandRecordIds(payload: unknown, ids: readonly string[]): unknown {
  return mapIdSlots(payload, (value, where) => {
    if (typeof value === 'string') {
      // An escaped numeric id: accept only the exact text `String(n)` produced.
      const n = Number(value);
      if (String(n) !== value) {
        throw new WireInterningError('badNumber', `${where()}: ${JSON.stringify(value)} is not an escaped number`);
      }
      return n;
    }
    const id = Number.isInteger(value) && value >= 0 ? ids[value] : undefined;
    if (id === undefined) {
      throw new WireInterningError('badIndex', `${where()}: ${value} is not an index into ${ids.length} ids`);
    }
    return id;
  });
}

// ---------------------------------------------------------------------------------------------
// LiveBodyDeduper

/** Body fields deduped, and the flag set when one is omitted. */
export const OMITTED_FLAG = {
  text: 'textOmitted',
  files: 'filesOmitted',
  prompt: 'promptOmitted',
  result: 'resultOmitted',
} as const;

export type BodyField = keyof typeof OMITTED_FLAG;

/** Which body fields each kind of item carries (SPEC §1.3). */
export const BODY_FIELDS_BY_ITEM_KIND = {
  userMessage: ['text'],
  assistantMessage: ['text'],
  checkpoint: ['files'],
  subagent: ['prompt', 'result'],
} as const satisfies Record<string, readonly BodyField[]>;

export type OmittedFlags = { [F in BodyField as (typeof OMITTED_FLAG)[F]]?: true };

/** An item after `dedupe`: the deduped fields may be gone, with their flags set instead. */
export type Deduped<I, F extends BodyField> = Omit<I, F> & Partial<Pick<I, F & keyof I>> & OmittedFlags;

/** 64-bit hash of a string (UTF-8). */
export type Hash64 = (text: string) => bigint;

let xxh64Promise: Promise<Hash64> | undefined;

/** Loads the xxhash WebAssembly module once and returns its xxh64. */
export function loadXxh64(): Promise<Hash64> {
  xxh64Promise ??= xxhash().then((api) => (text: string) => api.h64(text));
  return xxh64Promise;
}

/** A deduper for one subscription, with xxh64 ready. */
export async function createLiveBodyDeduper(memory: number = LIVE_DEDUPE_MEMORY): Promise<LiveBodyDeduper> {
  return new LiveBodyDeduper(await loadXxh64(), memory);
}

export class LiveBodyDeduper {
  /** `itemId \0 field` → fingerprint of the last body sent; Map order = least recently sent first. */
  private readonly sent = new Map<string, string>();

  constructor(
    private readonly hash: Hash64,
    readonly memory: number = LIVE_DEDUPE_MEMORY,
  ) {
    if (!Number.isSafeInteger(memory) || memory < 1) throw new RangeError('memory must be a positive integer');
  }

  get size(): number {
    return this.sent.size;
  }

  /** Forget everything (client reconnected without state). */
  reset(): void {
    this.sent.clear();
  }

  /**
   * Records that `body` is being sent as `field` of `itemId`; returns true when the client
   * already has exactly this body (it was the last one sent for that item and field).
   */
  markSent(itemId: string, field: BodyField, body: unknown): boolean {
    const key = `${itemId}\u0000${field}`;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    // Length next to the hash makes an accidental 64-bit collision even less likely.
    const fingerprint = `${this.hash(text).toString(16)}:${text.length}`;
    const previous = this.sent.get(key);
    this.sent.delete(key);
    this.sent.set(key, fingerprint);
    if (this.sent.size > this.memory) {
      const oldest = this.sent.keys().next().value as string;
      this.sent.delete(oldest);
    }
    return previous === fingerprint;
  }

  /**
   * Returns a copy of `item` in which each of `fields` that repeats what was last sent for
   * `itemId` is removed and flagged. Empty bodies are recorded but never omitted (the flag would
   * cost more than the body). Absent fields are skipped.
   */
  dedupe<I extends object, F extends BodyField>(itemId: string, item: I, fields: readonly F[]): Deduped<I, F> {
    const out: Record<string, unknown> = { ...(item as Record<string, unknown>) };
    for (const field of fields) {
      if (!Object.prototype.hasOwnProperty.call(out, field) || out[field] === undefined) continue;
      const body = out[field];
      const repeated = this.markSent(itemId, field, body);
      const empty = (typeof body === 'string' || Array.isArray(body)) && body.length === 0;
      if (repeated && !empty) {
        delete out[field];
        out[OMITTED_FLAG[field]] = true;
      }
    }
    return out as Deduped<I, F>;
  }
}
