/**
 * The bundle file (SPEC 6.6): one JSON document, versioned, holding threads as their event logs
 * (the log is the whole truth of a thread: every branch's messages, runs with their postures,
 * items, edits, head moves, plans), each with counts that must agree with its events, the
 * thread's checkpoint ref NAMES (the git objects stay in the repository), and the rules: the
 * workspace's `.vox/rules/*.md` files as written and the user's rules (VS Code's `vox.rules`).
 *
 * Parsing checks everything before anything is imported: the marker, the version (a newer one is
 * refused with `bundle/newerVersion` before its content is looked at), every event through the
 * protocol's own event validators, every event's thread, the counts, and the rule files' names.
 */
import { EVENT_VALIDATORS, type VoxEvent, type VoxEventType } from '../../protocol/events';
import { MAX_RULE_BODY_CHARS, ruleNameProblem } from '../../protocol/commands/rules';
import { isPlainObject } from '../../protocol/wire/validators';
import { BundleError } from './errors';

/** The `format` marker of a bundle file. */
export const BUNDLE_FORMAT = 'vox-bundle';
/** The version this build writes and the newest it reads (bump on an incompatible change). */
export const BUNDLE_FORMAT_VERSION = 1;
/** Largest bundle file read (bytes): a bundle is parsed whole. */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
/** Largest workspace rule file carried (characters of its text, front matter included). */
export const MAX_BUNDLED_RULE_CHARS = MAX_RULE_BODY_CHARS + 8_192;
/**
 * Event types not carried: checkpoints point at git objects of one repository (their ref names
 * travel as `checkpointRefs`), queued prompts would start runs where they are imported, and
 * `thread.imported` says where a thread came from in this install only.
 */
export const UNBUNDLED_EVENT_PREFIXES: readonly string[] = ['checkpoint.', 'queue.', 'thread.imported'];

export type BundledEvent = VoxEvent & { time: number };

export interface ThreadCounts { events: number; messages: number; runs: number; items: number; branches: number }

export interface BundleThread {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  parentThreadId: string | null;
  counts: ThreadCounts;
  events: BundledEvent[];
  checkpointRefs: string[];
}

export interface BundledRuleFile { file: string; text: string }

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: number;
  exportedAt: number;
  threads: BundleThread[];
  rules: { workspace: BundledRuleFile[]; user: Record<string, unknown>[] };
}

export function isBundled(type: string): boolean {
  return !UNBUNDLED_EVENT_PREFIXES.some((p) => type.startsWith(p));
}

/** Messages, runs, items and branches (leaves of the message tree) that `events` define. */
export function countEvents(events: readonly VoxEvent[]): ThreadCounts {
  let messages = 0;
  let runs = 0;
  let items = 0;
  const ids = new Set<string>();
  const parents = new Set<string>();
  for (const e of events) {
    if (e.type === 'message.added') {
      messages++;
      ids.add(e.messageId);
      if (e.parentId !== null) parents.add(e.parentId);
    } else if (e.type === 'run.started') runs++;
    else if (e.type === 'item.started') items++;
  }
  let branches = 0;
  for (const id of ids) if (!parents.has(id)) branches++;
  return { events: events.length, messages, runs, items, branches };
}

const malformed = (where: string, what: string): never => {
  throw new BundleError('malformed', `The bundle is malformed: ${where}: ${what}. Nothing was imported.`);
};

function int(v: unknown, where: string): number {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : malformed(where, 'expected an integer');
}

function str(v: unknown, where: string): string {
  return typeof v === 'string' ? v : malformed(where, 'expected a string');
}

function parseEvent(raw: unknown, threadId: string, where: string): BundledEvent {
  if (!isPlainObject(raw)) return malformed(where, 'expected an event object');
  const type = raw.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(EVENT_VALIDATORS, type)) {
    return malformed(where, `event type ${JSON.stringify(type)} is not one this version of Vox knows`);
  }
  if (!isBundled(type)) return malformed(where, `${type} events are not carried in bundles`);
  const { time, ...rest } = raw;
  let event: VoxEvent;
  try {
    event = EVENT_VALIDATORS[type as VoxEventType](rest) as VoxEvent;
  } catch (e) {
    return malformed(where, e instanceof Error ? e.message : String(e));
  }
  if (!('threadId' in event) || event.threadId !== threadId) return malformed(where, `the event belongs to another thread (${JSON.stringify((event as { threadId?: unknown }).threadId)})`);
  return { ...event, time: int(time, `${where}.time`) } as BundledEvent;
}

function parseThread(raw: unknown, where: string): BundleThread {
  if (!isPlainObject(raw)) return malformed(where, 'expected a thread object');
  const id = str(raw.id, `${where}.id`);
  if (id.length === 0) malformed(`${where}.id`, 'empty');
  if (!Array.isArray(raw.events) || raw.events.length === 0) malformed(`${where}.events`, 'expected a non-empty array of events');
  const events = (raw.events as unknown[]).map((e, i) => parseEvent(e, id, `${where}.events[${i}]`));
  if (events[0]!.type !== 'thread.created') malformed(`${where}.events[0]`, 'a thread\'s log starts with thread.created');
  if (!isPlainObject(raw.counts)) malformed(`${where}.counts`, 'expected {events, messages, runs, items, branches}');
  const c = raw.counts as Record<string, unknown>;
  const keys = ['events', 'messages', 'runs', 'items', 'branches'] as const;
  const counts = Object.fromEntries(keys.map((k) => [k, int(c[k], `${where}.counts.${k}`)])) as unknown as ThreadCounts;
  const actual = countEvents(events);
  for (const k of keys) {
    if (counts[k] !== actual[k]) malformed(`${where}.counts.${k}`, `says ${counts[k]}, the events hold ${actual[k]} (a truncated or edited bundle)`);
  }
  const refs = raw.checkpointRefs ?? [];
  if (!Array.isArray(refs)) malformed(`${where}.checkpointRefs`, 'expected an array of ref names');
  const parent = raw.parentThreadId ?? null;
  return {
    id, title: str(raw.title, `${where}.title`), createdAt: int(raw.createdAt, `${where}.createdAt`), updatedAt: int(raw.updatedAt, `${where}.updatedAt`),
    parentThreadId: parent === null ? null : str(parent, `${where}.parentThreadId`), counts, events,
    checkpointRefs: (refs as unknown[]).map((r, i) => str(r, `${where}.checkpointRefs[${i}]`)),
  };
}

function parseRules(raw: unknown): Bundle['rules'] {
  if (raw === undefined) return { workspace: [], user: [] };
  if (!isPlainObject(raw)) return malformed('rules', 'expected {workspace, user}');
  const ws = raw.workspace ?? [];
  const user = raw.user ?? [];
  if (!Array.isArray(ws)) malformed('rules.workspace', 'expected an array of {file, text}');
  if (!Array.isArray(user)) malformed('rules.user', 'expected an array of rules');
  const workspace = (ws as unknown[]).map((r, i): BundledRuleFile => {
    const where = `rules.workspace[${i}]`;
    if (!isPlainObject(r)) return malformed(where, 'expected {file, text}');
    const file = str(r.file, `${where}.file`);
    const m = /^([^/\\]+)\.md$/.exec(file);
    const problem = m ? ruleNameProblem(m[1]!) : 'expected <rule name>.md';
    if (problem) malformed(`${where}.file`, problem);
    const text = str(r.text, `${where}.text`);
    if (text.length > MAX_BUNDLED_RULE_CHARS) malformed(`${where}.text`, `longer than ${MAX_BUNDLED_RULE_CHARS} characters`);
    return { file, text };
  });
  const users = (user as unknown[]).map((r, i) => {
    if (!isPlainObject(r) || typeof r.name !== 'string') return malformed(`rules.user[${i}]`, 'expected a rule object with a name');
    return r;
  });
  return { workspace, user: users };
}

/** Parses a bundle file's text: typed errors for anything that is not a bundle this build can import whole. */
export function parseBundle(text: string): Bundle {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new BundleError('notABundle', 'The file is not JSON, so it is not a Vox bundle. Nothing was imported.');
  }
  if (!isPlainObject(raw) || raw.format !== BUNDLE_FORMAT) throw new BundleError('notABundle', `The file is not a Vox bundle (no "format": "${BUNDLE_FORMAT}"). Nothing was imported.`);
  const version = raw.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return malformed('version', 'expected a positive integer');
  if (version > BUNDLE_FORMAT_VERSION) {
    throw new BundleError('newerVersion', `The bundle has format version ${version}; this version of Vox reads up to version ${BUNDLE_FORMAT_VERSION}. Update Vox to import it. Nothing was imported.`);
  }
  if (!Array.isArray(raw.threads)) malformed('threads', 'expected an array');
  const threads = (raw.threads as unknown[]).map((t, i) => parseThread(t, `threads[${i}]`));
  const seen = new Set<string>();
  for (const t of threads) {
    if (seen.has(t.id)) malformed('threads', `thread ${t.id} appears twice`);
    seen.add(t.id);
  }
  return { format: BUNDLE_FORMAT, version, exportedAt: int(raw.exportedAt ?? 0, 'exportedAt'), threads, rules: parseRules(raw.rules) };
}
