/**
 * Entity ids (SPEC §1.1): random ids from `allocate`, deterministic ids from `derive`, and the
 * derived constructors the engine uses so that replaying the same event stream yields the same ids.
 *
 * Formats
 *   allocate(prefix)            → `prefix:<uuid v4>`
 *   derive(prefix, [[k, v], …]) → `prefix:k1:enc(v1):k2:enc(v2)…`
 *
 * `enc` percent-encodes every UTF-8 byte outside RFC 3986 unreserved (`A-Z a-z 0-9 - _ . ~`) as
 * `%XX` with upper-case hex — unlike `encodeURIComponent`, which leaves `!'()*` alone. So an
 * encoded value never contains `:` and a derived id splits unambiguously on `:`. Values are
 * arbitrary strings (may be empty, may themselves be ids); a lone UTF-16 surrogate cannot be
 * UTF-8 encoded and is encoded as U+FFFD (`%EF%BF%BD`), the same replacement `TextEncoder` makes,
 * so such values do not round-trip exactly but never throw. Prefixes and keys must be non-empty
 * and consist of unreserved characters only; keys within one id must be distinct.
 *
 * Derived constructors (prefix · keys):
 *   deriveRunFromThreadOrdinal(threadId, ordinal)          run      · thread, ordinal
 *   deriveRunAttempt(runId, attempt)                       attempt  · run, ordinal
 *   deriveNodeFromProviderItem(threadId, provider, itemId) node     · thread, provider, item
 *   deriveTurnItemFromProviderItem(turnId, provider, item) item     · turn, provider, item
 *   deriveSubagentFromTask(parentThreadId, taskId)         subagent · parent, task
 * Ordinals are non-negative safe integers written in decimal.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export type IdErrorCode = ErrorCode<'id'>;

/** Typed error for every id problem; `code` says which rule was broken. */
export class IdError extends VoxError<'id'> {
  override readonly name = 'IdError';
  readonly domain = 'id' as const;
  constructor(
    code: IdErrorCode,
    message: string,
  ) {
    super(code, message);
  }
}

/** Prefixes used by the derived constructors. */
export const ID_PREFIX = {
  run: 'run',
  attempt: 'attempt',
  node: 'node',
  turnItem: 'item',
  subagent: 'subagent',
} as const;

/** Separator between prefix, keys and encoded values; never appears inside an encoded value. */
export const ID_SEPARATOR = ':';

/** Upper-case hex digits used by `%XX` escapes (RFC 3986 recommends upper case). */
const HEX_DIGITS = '0123456789ABCDEF';

const UNRESERVED_RE = /^[A-Za-z0-9\-_.~]+$/;

function isUnreservedByte(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) || // A-Z
    (b >= 0x61 && b <= 0x7a) || // a-z
    (b >= 0x30 && b <= 0x39) || // 0-9
    b === 0x2d || // -
    b === 0x5f || // _
    b === 0x2e || // .
    b === 0x7e // ~
  );
}

/** Encoded form of each byte value: the character itself when unreserved, else `%XX`. */
const BYTE_TO_ENCODED: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  isUnreservedByte(b)
    ? String.fromCharCode(b)
    : `%${HEX_DIGITS[b >> 4]}${HEX_DIGITS[b & 0x0f]}`,
);

const utf8Encoder = new TextEncoder();
/** fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM: a leading U+FEFF is kept as data. */
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Percent-encodes `value` over UTF-8 (lone surrogates become U+FFFD). */
export function encodeIdSegment(value: string): string {
  let out = '';
  for (const b of utf8Encoder.encode(value)) out += BYTE_TO_ENCODED[b];
  return out;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  return -1; // lower-case hex is not canonical and is rejected
}

/** Inverse of `encodeIdSegment`; throws `IdError('invalidEncoding')` on anything it could not produce. */
export function decodeIdSegment(segment: string): string {
  const bytes = new Uint8Array(segment.length);
  let n = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c === 0x25 /* % */) {
      const hi = hexValue(segment.charCodeAt(i + 1));
      const lo = hexValue(segment.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) {
        throw new IdError('invalidEncoding', `bad %-escape at offset ${i} in ${JSON.stringify(segment)}`);
      }
      const b = (hi << 4) | lo;
      if (isUnreservedByte(b)) {
        throw new IdError('invalidEncoding', `unreserved byte escaped at offset ${i} in ${JSON.stringify(segment)}`);
      }
      bytes[n++] = b;
      i += 2;
    } else if (c < 0x80 && isUnreservedByte(c)) {
      bytes[n++] = c;
    } else {
      throw new IdError('invalidEncoding', `character that must be escaped at offset ${i} in ${JSON.stringify(segment)}`);
    }
  }
  try {
    return utf8Decoder.decode(bytes.subarray(0, n));
  } catch {
    throw new IdError('invalidEncoding', `escapes are not valid UTF-8 in ${JSON.stringify(segment)}`);
  }
}

function checkToken(kind: 'prefix' | 'key', token: string): void {
  if (typeof token !== 'string' || !UNRESERVED_RE.test(token)) {
    throw new IdError(
      kind === 'prefix' ? 'invalidPrefix' : 'invalidKey',
      `id ${kind} must be non-empty and use only A-Z a-z 0-9 - _ . ~, got ${JSON.stringify(token)}`,
    );
  }
}

/** Mints a fresh random id `prefix:<uuid v4>`. */
export function allocate(prefix: string): string {
  checkToken('prefix', prefix);
  return `${prefix}${ID_SEPARATOR}${globalThis.crypto.randomUUID()}`;
}

/** Deterministic id `prefix:k1:enc(v1):k2:enc(v2)…`; at least one pair, distinct keys. */
export function derive(prefix: string, pairs: readonly (readonly [string, string])[]): string {
  checkToken('prefix', prefix);
  if (pairs.length === 0) throw new IdError('malformedId', 'derive needs at least one [key, value] pair');
  const seen = new Set<string>();
  let out = prefix;
  for (const [key, value] of pairs) {
    checkToken('key', key);
    if (seen.has(key)) throw new IdError('duplicateKey', `key ${JSON.stringify(key)} appears twice`);
    seen.add(key);
    if (typeof value !== 'string') {
      throw new IdError('invalidEncoding', `value for key ${JSON.stringify(key)} must be a string`);
    }
    out += ID_SEPARATOR + key + ID_SEPARATOR + encodeIdSegment(value);
  }
  return out;
}

export interface ParsedDerivedId {
  prefix: string;
  pairs: [string, string][];
}

/** Splits a derived id back into prefix and decoded pairs; `derive(parsed) === id` for every accepted id. */
export function parseDerived(id: string): ParsedDerivedId {
  if (typeof id !== 'string') throw new IdError('malformedId', 'id must be a string');
  const parts = id.split(ID_SEPARATOR);
  if (parts.length < 3 || parts.length % 2 === 0) {
    throw new IdError('malformedId', `not a derived id (prefix:key:value…): ${JSON.stringify(id)}`);
  }
  const prefix = parts[0] as string;
  checkToken('prefix', prefix);
  const pairs: [string, string][] = [];
  const seen = new Set<string>();
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i] as string;
    checkToken('key', key);
    if (seen.has(key)) throw new IdError('duplicateKey', `key ${JSON.stringify(key)} appears twice in ${JSON.stringify(id)}`);
    seen.add(key);
    pairs.push([key, decodeIdSegment(parts[i + 1] as string)]);
  }
  return { prefix, pairs };
}

/** The decoded value of `key` in a derived id, or undefined when the id has no such key. */
export function derivedValue(id: string, key: string): string | undefined {
  return parseDerived(id).pairs.find(([k]) => k === key)?.[1];
}

function checkOrdinal(name: string, n: number): string {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new IdError('invalidOrdinal', `${name} must be a non-negative safe integer, got ${String(n)}`);
  }
  return String(n);
}

function checkValue(name: string, v: string): string {
  if (typeof v !== 'string' || v.length === 0) {
    throw new IdError('emptyValue', `${name} must be a non-empty string`);
  }
  return v;
}

/** `run:thread:<threadId>:ordinal:<n>` — the n-th run of a thread. */
export function deriveRunFromThreadOrdinal(threadId: string, ordinal: number): string {
  return derive(ID_PREFIX.run, [
    ['thread', checkValue('threadId', threadId)],
    ['ordinal', checkOrdinal('ordinal', ordinal)],
  ]);
}

/** `attempt:run:<runId>:ordinal:<n>` — the n-th attempt (retry) of a run. */
export function deriveRunAttempt(runId: string, attempt: number): string {
  return derive(ID_PREFIX.attempt, [
    ['run', checkValue('runId', runId)],
    ['ordinal', checkOrdinal('attempt', attempt)],
  ]);
}

/** `node:thread:<threadId>:provider:<provider>:item:<itemId>` — a thread node from a provider item. */
export function deriveNodeFromProviderItem(threadId: string, provider: string, itemId: string): string {
  return derive(ID_PREFIX.node, [
    ['thread', checkValue('threadId', threadId)],
    ['provider', checkValue('provider', provider)],
    ['item', checkValue('itemId', itemId)],
  ]);
}

/** `item:turn:<turnId>:provider:<provider>:item:<itemId>` — a turn item from a provider item. */
export function deriveTurnItemFromProviderItem(turnId: string, provider: string, itemId: string): string {
  return derive(ID_PREFIX.turnItem, [
    ['turn', checkValue('turnId', turnId)],
    ['provider', checkValue('provider', provider)],
    ['item', checkValue('itemId', itemId)],
  ]);
}

/** `subagent:parent:<parentThreadId>:task:<taskId>` — the child thread a task spawned. */
export function deriveSubagentFromTask(parentThreadId: string, taskId: string): string {
  return derive(ID_PREFIX.subagent, [
    ['parent', checkValue('parentThreadId', parentThreadId)],
    ['task', checkValue('taskId', taskId)],
  ]);
}
