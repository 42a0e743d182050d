/**
 * Ref names and commit-message metadata of checkpoints (SPEC §4.2).
 *
 * Thread ids contain `:` (and, for derived ids, `%`), which git refuses in ref names, so a thread
 * id becomes one ref component by percent-encoding every UTF-8 byte outside `[A-Za-z0-9_-]` as
 * `%XX` (upper-case hex): `thread:1f2e` → `thread%3A1f2e`. The result never contains `.`, `/`,
 * `~`, `^`, `:`, `?`, `*`, `[`, `\`, spaces or control characters, so it is always a valid
 * component, and it decodes back exactly. An encoding longer than
 * `MAX_THREAD_REF_COMPONENT_BYTES` (a filesystem limit for loose refs) is replaced by
 * `%hash-<sha256 hex>`; percent-encoding never produces `%h`, so the two forms cannot collide, and
 * the thread id itself is always in the commit metadata.
 *
 * Metadata lives in the commit message — no database: a readable summary and one `Vox-Meta:` line
 * with single-line JSON. Paths that are valid UTF-8 are stored as strings (`p`), others as base64
 * bytes (`b`).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  CHECKPOINT_REF_PREFIX,
  CHECKPOINT_SUBJECT_PREFIX,
  CheckpointError,
  MAX_THREAD_ID_LENGTH,
  RESTORE_POINT_REF_PREFIX,
  RESTORE_POINT_SUBJECT_PREFIX,
  repoPath,
  type ChangeStatus,
  type ChangedFile,
  type CheckpointTrigger,
  type NestedCheckpoint,
  type RepoPath,
  type SkippedFile,
} from './types';

/** Longest encoded thread id used verbatim as a ref component (bytes; loose refs are files). */
export const MAX_THREAD_REF_COMPONENT_BYTES = 200;
/** Marker that starts the metadata line in a checkpoint commit message. */
export const META_LINE_PREFIX = 'Vox-Meta: ';
/** Version of the metadata JSON. */
export const META_VERSION = 1;
/** Changed paths named in a commit message's readable `Changed:` line (the JSON lists more). */
const SUMMARY_MAX_PATHS = 5;
/**
 * Random bytes in every commit's metadata: two captures of the same state in the same
 * millisecond (two processes) are then different commits, so git refuses the second one's ref
 * (fast-import treats an identical commit as a fast-forward) and it takes the next ordinal.
 */
const META_NONCE_BYTES = 4;

/** C0 control characters and DEL. */
function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isControl(s.charCodeAt(i))) return true;
  return false;
}

/** A UTF-16 surrogate without its partner (cannot be encoded as UTF-8). */
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws `badThreadId` unless `threadId` is usable in a ref and a one-line commit subject. */
export function validateThreadId(threadId: unknown): asserts threadId is string {
  if (typeof threadId !== 'string' || threadId.length === 0) throw new CheckpointError('badThreadId', 'thread id must be a non-empty string');
  if (threadId.length > MAX_THREAD_ID_LENGTH) throw new CheckpointError('badThreadId', `thread id is longer than ${MAX_THREAD_ID_LENGTH} characters`);
  // Control characters would break the one-line subject; lone surrogates cannot round-trip UTF-8.
  if (hasControlChar(threadId)) throw new CheckpointError('badThreadId', 'thread id contains control characters');
  if (LONE_SURROGATE_RE.test(threadId)) throw new CheckpointError('badThreadId', 'thread id contains a lone UTF-16 surrogate');
}

export function validateOrdinal(ordinal: unknown): asserts ordinal is number {
  if (typeof ordinal !== 'number' || !Number.isSafeInteger(ordinal) || ordinal < 0) throw new CheckpointError('badArgument', `checkpoint ordinal must be a non-negative safe integer, got ${String(ordinal)}`);
}

function isRefSafeByte(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x5f;
}

/** One valid ref component for a thread id (see the header comment). */
export function encodeThreadIdForRef(threadId: string): string {
  validateThreadId(threadId);
  let out = '';
  for (const b of Buffer.from(threadId, 'utf8')) out += isRefSafeByte(b) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  if (out.length <= MAX_THREAD_REF_COMPONENT_BYTES) return out;
  return `%hash-${createHash('sha256').update(threadId, 'utf8').digest('hex')}`;
}

/** Inverse of `encodeThreadIdForRef` for the verbatim form; `null` for the hashed form. */
export function decodeThreadRefComponent(component: string): string | null {
  if (component.startsWith('%hash-')) return null;
  return Buffer.from(component.replace(/%([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
}

export function threadRefPrefix(threadId: string): string {
  return `${CHECKPOINT_REF_PREFIX}${encodeThreadIdForRef(threadId)}/`;
}

export function checkpointRef(threadId: string, ordinal: number): string {
  validateOrdinal(ordinal);
  return `${threadRefPrefix(threadId)}${ordinal}`;
}

/** Parses `refs/vox/checkpoints/<enc>/<ordinal>`; null for anything else. */
export function parseCheckpointRef(ref: string): { threadComponent: string; ordinal: number } | null {
  if (!ref.startsWith(CHECKPOINT_REF_PREFIX)) return null;
  const rest = ref.slice(CHECKPOINT_REF_PREFIX.length).split('/');
  if (rest.length !== 2 || !/^(0|[1-9][0-9]*)$/.test(rest[1]!)) return null;
  const ordinal = Number(rest[1]);
  return Number.isSafeInteger(ordinal) ? { threadComponent: rest[0]!, ordinal } : null;
}

/**
 * Restore point ref for `timeMs`: a sortable UTC stamp plus a per-process sequence number and a
 * random suffix, so two restores in the same millisecond (even from two processes) never collide.
 */
export function restorePointRef(timeMs: number, seq: number, random: string): string {
  const iso = new Date(timeMs).toISOString(); // 2025-01-02T03:04:05.678Z
  const stamp = iso.replace(/[-:]/g, '').replace('.', ''); // 20250102T030405678Z
  return `${RESTORE_POINT_REF_PREFIX}${stamp}-${seq}-${random}`;
}

// ---------------------------------------------------------------------------------------------
// Metadata

interface JsonPath { p?: string; b?: string }

export function pathToJson(raw: Buffer): JsonPath {
  const s = raw.toString('utf8');
  return Buffer.from(s, 'utf8').equals(raw) ? { p: s } : { b: raw.toString('base64') };
}

export function pathFromJson(j: JsonPath): RepoPath {
  if (typeof j.p === 'string') return repoPath(Buffer.from(j.p, 'utf8'));
  if (typeof j.b === 'string') return repoPath(Buffer.from(j.b, 'base64'));
  throw new CheckpointError('gitFailed', 'malformed path in checkpoint metadata');
}

const STATUS_LETTERS: Record<ChangeStatus, string> = { added: 'A', modified: 'M', deleted: 'D', typeChanged: 'T', renamed: 'R', copied: 'C', unmerged: 'U', unknown: 'X' };

export function statusFromLetter(letter: string): ChangeStatus {
  for (const [k, v] of Object.entries(STATUS_LETTERS)) if (v === letter) return k as ChangeStatus;
  return 'unknown';
}

/** Metadata stored in every checkpoint or restore point commit. */
export interface CommitMeta {
  kind: 'checkpoint' | 'restorePoint';
  threadId?: string;
  ordinal?: number;
  trigger?: CheckpointTrigger;
  /** For restore points: the ref or commit being restored. */
  target?: string;
  timeMs: number;
  changedCount: number;
  changed: ChangedFile[];
  skipped: SkippedFile[];
  preserved: SkippedFile[];
  nested: NestedCheckpoint[];
}

/**
 * What a checkpoint records besides files, the same for every repository in one capture: its ref
 * (`refs/vox/checkpoints/<thread>/<ordinal>`, nested repositories use the same name), thread,
 * ordinal, trigger and time. A restore point is captured the same way under its own ref.
 */
export interface CheckpointHeader {
  ref: string;
  threadId: string;
  ordinal: number;
  trigger: CheckpointTrigger;
  timeMs: number;
  /** Set when the capture is a restore point: the ref or commit about to be restored. */
  restorePointOf?: string;
}

export function emptyMeta(kind: CommitMeta['kind'], timeMs: number): CommitMeta {
  return { kind, timeMs, changedCount: 0, changed: [], skipped: [], preserved: [], nested: [] };
}

function oneLine(s: string): string {
  let out = '';
  for (const ch of s) out += isControl(ch.charCodeAt(0)) ? ' ' : ch;
  return out;
}

export function formatCommitMessage(meta: CommitMeta): string {
  const subject = meta.kind === 'checkpoint' ? `${CHECKPOINT_SUBJECT_PREFIX}${meta.threadId ?? ''}:${meta.ordinal ?? ''}` : `${RESTORE_POINT_SUBJECT_PREFIX}${oneLine(meta.target ?? '')}`;
  const lines = [subject, ''];
  if (meta.trigger) lines.push(`Trigger: ${meta.trigger.kind}${meta.trigger.kind === 'tool' && meta.trigger.toolName ? ` ${oneLine(meta.trigger.toolName)}` : ''}`);
  lines.push(`Time: ${new Date(meta.timeMs).toISOString()}`);
  lines.push(`Changed: ${meta.changedCount} file(s)${meta.changed.length ? ` — ${meta.changed.slice(0, SUMMARY_MAX_PATHS).map((c) => oneLine(c.path)).join(', ')}${meta.changedCount > SUMMARY_MAX_PATHS ? ', …' : ''}` : ''}`);
  if (meta.skipped.length) lines.push(`Skipped (over size cap): ${meta.skipped.length} file(s)`);
  if (meta.nested.length) lines.push(`Nested repositories: ${meta.nested.map((n) => oneLine(n.path)).join(', ')}`);
  const json = {
    v: META_VERSION,
    nonce: randomBytes(META_NONCE_BYTES).toString('hex'),
    kind: meta.kind,
    threadId: meta.threadId,
    ordinal: meta.ordinal,
    trigger: meta.trigger,
    target: meta.target,
    timeMs: meta.timeMs,
    changedCount: meta.changedCount,
    changed: meta.changed.map((c) => ({ s: STATUS_LETTERS[c.status], ...pathToJson(c.raw) })),
    skipped: meta.skipped.map((s) => ({ bytes: s.bytes, ...pathToJson(s.raw) })),
    preserved: meta.preserved.map((s) => ({ bytes: s.bytes, ...pathToJson(s.raw) })),
    nested: meta.nested.map((n) => ({ commit: n.commit, ...pathToJson(n.raw) })),
  };
  lines.push('', `${META_LINE_PREFIX}${JSON.stringify(json)}`);
  return `${lines.join('\n')}\n`;
}

type JsonMeta = {
  v?: number; kind?: string; threadId?: string; ordinal?: number; trigger?: CheckpointTrigger; target?: string; timeMs?: number; changedCount?: number;
  changed?: Array<JsonPath & { s?: string }>; skipped?: Array<JsonPath & { bytes?: number }>; preserved?: Array<JsonPath & { bytes?: number }>; nested?: Array<JsonPath & { commit?: string }>;
};

/** Parses the metadata of a commit message; null when the message is not one of ours. */
export function parseCommitMessage(message: string): CommitMeta | null {
  const line = message.split('\n').reverse().find((l) => l.startsWith(META_LINE_PREFIX));
  if (!line) return null;
  let j: JsonMeta;
  try {
    j = JSON.parse(line.slice(META_LINE_PREFIX.length)) as JsonMeta;
  } catch {
    return null;
  }
  if (j.v !== META_VERSION || (j.kind !== 'checkpoint' && j.kind !== 'restorePoint') || typeof j.timeMs !== 'number') return null;
  try {
    return {
      kind: j.kind,
      threadId: j.threadId,
      ordinal: j.ordinal,
      trigger: j.trigger,
      target: j.target,
      timeMs: j.timeMs,
      changedCount: j.changedCount ?? 0,
      changed: (j.changed ?? []).map((c) => ({ ...pathFromJson(c), status: statusFromLetter(c.s ?? 'X') })),
      skipped: (j.skipped ?? []).map((s) => ({ ...pathFromJson(s), bytes: s.bytes ?? 0 })),
      preserved: (j.preserved ?? []).map((s) => ({ ...pathFromJson(s), bytes: s.bytes ?? 0 })),
      nested: (j.nested ?? []).filter((n) => typeof n.commit === 'string' && /^[0-9a-f]{40,64}$/.test(n.commit)).map((n) => ({ ...pathFromJson(n), commit: n.commit! })),
    };
  } catch {
    return null;
  }
}

/** Extracts the message from `git cat-file commit` output (everything after the first blank line). */
export function messageOfCommitObject(obj: Buffer): string {
  const s = obj.toString('utf8');
  const i = s.indexOf('\n\n');
  return i < 0 ? '' : s.slice(i + 2);
}
