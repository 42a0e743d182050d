/**
 * What a bundle may add to threads this install already holds (SPEC 6.6). A bundle adds only
 * threads and branches of its own: it never sets a held thread's rights (permission mode, work
 * mode, permission rules, mode ceiling — `bundle/rightsChange`); it never adds anything to a thread made here,
 * never deletes a held thread, never hangs its events on messages it does not carry itself
 * (history made here), and never lists a new thread under a thread made here
 * (`bundle/foreignHistory`). A thread counts as come-from-a-bundle when its log holds
 * `thread.imported`, which the importer writes when a bundle adds the thread; later bundles may
 * then grow it (a thread that grew elsewhere) within those limits. Any such event refuses the
 * whole bundle: nothing is imported.
 */
import type { VoxStore } from '../store/store';
import { BundleError } from './errors';
import type { BundleThread, BundledEvent } from './format';

/** Event types that set a thread's rights: never taken from a bundle for a thread held here. */
export const RIGHTS_EVENT_TYPES: ReadonlySet<string> = new Set(['thread.workModeSet', 'thread.permissionModeSet', 'thread.permissionRulesSet', 'thread.ceilingSet']);
/** Event types a bundle never adds to a held thread: it cannot delete (or create again) what is here. */
const NEVER_ON_HELD: ReadonlySet<string> = new Set(['thread.deleted', 'thread.created']);
/** The marker of a thread a bundle added (kept home: ./format.ts UNBUNDLED_EVENT_PREFIXES). */
export const IMPORTED_EVENT = 'thread.imported';

const RIGHTS_WORDS: Record<string, string> = {
  'thread.workModeSet': 'the work mode (Plan / Act)',
  'thread.permissionModeSet': 'the permission mode',
  'thread.permissionRulesSet': 'the permission rules',
  'thread.ceilingSet': 'the mode ceiling',
};

/** True when a bundle added the thread to this install (its log holds `thread.imported`). */
export function cameFromBundle(store: VoxStore, threadId: string): boolean {
  return store.db.prepare('SELECT 1 FROM events WHERE thread_id = ? AND type = ? LIMIT 1').get(threadId, IMPORTED_EVENT) !== undefined;
}

/** The message an event hangs on or points at, if any. */
function anchorOf(e: BundledEvent): string | null {
  switch (e.type) {
    case 'message.added':
      return e.parentId;
    case 'message.edited':
      return e.messageId;
    case 'thread.rewound':
      return e.toMessageId;
    case 'thread.branchSwitched':
      return e.toMessageId;
    case 'run.started':
      return e.userMessageId;
    default:
      return null;
  }
}

const refuse = (code: 'rightsChange' | 'foreignHistory', threadId: string, why: string): never => {
  throw new BundleError(code, `The bundle ${why} thread ${threadId}, which this install already holds. Nothing was imported.`);
};

/** Throws unless `fresh` (the bundle's events for held thread `t` that this install lacks) are all the bundle's to add. */
export function checkHeldThread(store: VoxStore, t: BundleThread, fresh: readonly BundledEvent[]): void {
  if (fresh.length === 0) return;
  const rights = fresh.find((e) => RIGHTS_EVENT_TYPES.has(e.type));
  if (rights) refuse('rightsChange', t.id, `would change ${RIGHTS_WORDS[rights.type] ?? rights.type} of`);
  if (!cameFromBundle(store, t.id)) refuse('foreignHistory', t.id, `would add ${fresh.length} event(s) to the history of a thread made here:`);
  const ending = fresh.find((e) => NEVER_ON_HELD.has(e.type));
  if (ending) refuse('foreignHistory', t.id, `would ${ending.type === 'thread.deleted' ? 'delete' : 'create again'}`);
  const carried = new Set<string>();
  for (const e of t.events) if (e.type === 'message.added') carried.add(e.messageId);
  for (const e of fresh) {
    const anchor = anchorOf(e);
    if (anchor !== null && !carried.has(anchor)) refuse('foreignHistory', t.id, `hangs a ${e.type} event on message ${anchor}, which it does not carry (history made here), in`);
  }
}

/** Throws when new thread `t` would be listed under a thread made here (a planted subagent thread). */
export function checkNewThread(store: VoxStore, t: BundleThread): void {
  const created = t.events[0];
  const parent = created?.type === 'thread.created' ? (created.parentThreadId ?? null) : null;
  if (parent === null) return;
  if (store.db.prepare('SELECT 1 FROM threads WHERE id = ?').get(parent) === undefined || cameFromBundle(store, parent)) return;
  throw new BundleError('foreignHistory', `The bundle would add thread ${t.id} under thread ${parent}, which was made here. Nothing was imported.`);
}
