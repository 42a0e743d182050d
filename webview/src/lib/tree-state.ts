/**
 * The conversation tree of one thread, as the webview keeps it: every
 * message of every branch (id, parent, role, run, content, status, edited), the thread's head, and
 * the derived `entries` — the path from the root to the head, each user message followed by the
 * runs that answer it. Pure and JSON-serialisable like ./thread-state.ts, which calls in here for
 * `message.added`, `message.edited`, `run.started`, `thread.rewound` and `thread.branchSwitched`.
 *
 * Cost: a 10,000-message thread replays in O(n). The common case (a message or run that follows
 * the head, i.e. every live event and a linear replay) appends to `entries` in O(1); anything that
 * moves the head elsewhere (a switch, a restore, a regenerated sibling) only marks the path dirty,
 * and `finishBatch` recomputes it once per batch of events (O(path + runs)), never per event.
 *
 * Children before parents: `children` is keyed by the parent's id whether or not that message has
 * arrived yet, so a late parent finds its children already there; until then they act as roots.
 * Siblings are ordered by creation (the event's time, then arrival), as src/protocol/branches.ts
 * orders them, so the ‹ 2/3 › switcher and the engine's branch ids agree.
 */
import type { MessageStatus, Role } from '../../../src/protocol/events';
import type { TreeMessage as BranchMessage } from '../../../src/protocol/branches';

/** The key of the root messages in `TreeFields.children` (no message id is empty). */
export const ROOT_KEY = '';

export type Entry =
  | { kind: 'message'; messageId: string; role: Role; content: string; status: MessageStatus }
  | { kind: 'run'; runId: string };

/** A message as the webview keeps it; also what src/protocol/branches.ts's `buildTree` takes. */
export interface TreeMessage extends BranchMessage {
  id: string;
  parentId: string | null;
  role: Role;
  runId: string | null;
  content: string;
  status: MessageStatus;
  /** When the engine stored it (the event's time, ms): orders siblings. */
  createdAt: number;
  /** Set by `message.edited` (the event's time): the message shows "edited". */
  editedAt: number | null;
  /** Arrival order: breaks ties between siblings created in the same millisecond. */
  order: number;
}

export interface TreeFields {
  /** Every message of the thread, every branch, by id. */
  messages: Record<string, TreeMessage>;
  /** Child ids by parent id (ROOT_KEY: the roots), in creation order. */
  children: Record<string, string[]>;
  /** The message new prompts follow; null: before the first message (or restored to the start). */
  headId: string | null;
  /** Runs by the user message they answer, in start order. */
  runsByUser: Record<string, string[]>;
  messageCount: number;
  /** Messages with no children: the branches' tips (≥ 2: the thread has branches to compare). */
  leafCount: number;
  /** `entries` no longer follows the head: recomputed by `finishBatch`. */
  dirty: boolean;
}

/** What the tree needs of a thread's state (./thread-state.ts's ThreadState has all of it). */
export interface TreeHost {
  entries: Entry[];
  runs: Record<string, { runId: string; userMessageId: string; final: { messageId: string; content: string } | null }>;
  tree: TreeFields;
  /** Messages on the branch below the head (what a checkpoint "thread" restore left); 0 when the head is a tip. */
  rewoundEntries: number;
}

/** Work counters (path steps, full recomputes): tests check that replays stay linear without timing anything. */
export const treeWork = { recomputes: 0, steps: 0 };

export function createTree(): TreeFields {
  return { messages: {}, children: {}, headId: null, runsByUser: {}, messageCount: 0, leafCount: 0, dirty: false };
}

const keyOf = (parentId: string | null): string => parentId ?? ROOT_KEY;

function before(a: TreeMessage, b: TreeMessage): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.order < b.order);
}

/**
 * The list under `key`, created if missing. Read back after the assignment, never taken from it:
 * in the app the tree is a Svelte `$state` proxy, and a push on the raw array just assigned would
 * not reach the proxy's copy.
 */
function listIn(lists: Record<string, string[]>, key: string): string[] {
  if (!lists[key]) lists[key] = [];
  return lists[key];
}

/** Puts `m` among its siblings by creation (almost always at the end: O(1)). */
function insertChild(tree: TreeFields, m: TreeMessage): void {
  const list = listIn(tree.children, keyOf(m.parentId));
  let at = list.length;
  while (at > 0 && before(m, tree.messages[list[at - 1]!]!)) at--;
  list.splice(at, 0, m.id);
}

function messageEntry(m: TreeMessage): Entry {
  return { kind: 'message', messageId: m.id, role: m.role, content: m.content, status: m.status };
}

/** True when `m` shows as its run's answer rather than as an entry of its own. */
function isRunAnswer(host: TreeHost, m: TreeMessage): boolean {
  return m.role === 'assistant' && m.runId !== null && host.runs[m.runId] !== undefined;
}

export interface AddedMessage {
  messageId: string; parentId: string | null; role: Role; runId: string | null; content: string; status: MessageStatus;
}

/** `message.added`: the message joins the tree and becomes the head. */
export function addMessage(host: TreeHost, ev: AddedMessage, time: number): void {
  const tree = host.tree;
  if (tree.messages[ev.messageId]) return; // a replay overlap that slipped past the seq check
  const m: TreeMessage = {
    id: ev.messageId, parentId: ev.parentId, role: ev.role, runId: ev.runId, content: ev.content, status: ev.status,
    createdAt: time, editedAt: null, order: tree.messageCount,
  };
  const follows = !tree.dirty && (ev.parentId === null ? tree.headId === null : tree.headId === ev.parentId);
  tree.messages[m.id] = m;
  tree.messageCount++;
  const parent = ev.parentId !== null ? tree.messages[ev.parentId] : undefined;
  const hadChildren = (tree.children[m.id]?.length ?? 0) > 0; // its children came first
  if (!hadChildren) tree.leafCount++;
  if (parent && (tree.children[parent.id]?.length ?? 0) === 0) tree.leafCount--;
  insertChild(tree, m);
  tree.headId = m.id;
  if (follows && !hadChildren && !(tree.runsByUser[m.id]?.length)) {
    if (!isRunAnswer(host, m)) host.entries.push(messageEntry(m));
    host.rewoundEntries = 0;
  } else {
    tree.dirty = true;
  }
}

/** `run.started`: the run shows after the user message it answers. */
export function addRun(host: TreeHost, runId: string, userMessageId: string): void {
  const tree = host.tree;
  const list = listIn(tree.runsByUser, userMessageId);
  if (list.includes(runId)) return;
  list.push(runId);
  if (!tree.dirty && tree.headId === userMessageId) host.entries.push({ kind: 'run', runId });
  else tree.dirty = true;
}

/** `thread.rewound` / `thread.branchSwitched`: the head moves (an unknown target is ignored: false). */
export function moveHead(host: TreeHost, toMessageId: string | null): boolean {
  const tree = host.tree;
  if (toMessageId !== null && !tree.messages[toMessageId]) return false;
  tree.headId = toMessageId;
  tree.dirty = true;
  return true;
}

/** `message.edited`: new content in place (the original stays in the engine's log). */
export function editMessage(host: TreeHost, messageId: string, content: string, time: number): boolean {
  const m = host.tree.messages[messageId];
  if (!m) return false;
  m.content = content;
  m.editedAt = time;
  const run = m.runId !== null ? host.runs[m.runId] : undefined;
  if (run?.final?.messageId === messageId) run.final.content = content;
  host.tree.dirty = true; // an entry of it (a user or standalone message) gets the new text
  return true;
}

/** Ids from the root to `id` (an unknown parent ends the walk: that message acts as a root). */
export function pathIds(tree: TreeFields, id: string | null): string[] {
  const path: string[] = [];
  let cur = id !== null ? tree.messages[id] : undefined;
  // At most messageCount steps: a malformed parent cycle cannot hang the view.
  for (let guard = tree.messageCount; cur && guard > 0; guard--) {
    path.push(cur.id);
    treeWork.steps++;
    cur = cur.parentId !== null ? tree.messages[cur.parentId] : undefined;
  }
  return path.reverse();
}

/** Follows the most recently created child down from `id` to a tip. */
export function latestLeafIn(tree: TreeFields, id: string): string {
  let cur = id;
  for (let guard = tree.messageCount; guard > 0; guard--) {
    const kids = tree.children[cur];
    if (!kids || kids.length === 0) break;
    cur = kids[kids.length - 1]!;
  }
  return cur;
}

/** Recomputes `entries` from the head if anything moved it off the path (once per batch). */
export function finishBatch(host: TreeHost): void {
  const tree = host.tree;
  if (!tree.dirty) return;
  tree.dirty = false;
  treeWork.recomputes++;
  const entries: Entry[] = [];
  for (const id of pathIds(tree, tree.headId)) {
    const m = tree.messages[id]!;
    if (!isRunAnswer(host, m)) entries.push(messageEntry(m));
    for (const runId of tree.runsByUser[id] ?? []) if (host.runs[runId]) entries.push({ kind: 'run', runId });
  }
  // A run whose user message this view never saw still shows (at the end) rather than vanish.
  for (const [userId, runIds] of Object.entries(tree.runsByUser)) {
    if (tree.messages[userId]) continue;
    for (const runId of runIds) if (host.runs[runId]) entries.push({ kind: 'run', runId });
  }
  host.entries = entries;
  host.rewoundEntries = tree.headId !== null ? belowHead(tree, tree.headId) : rootBranchLength(tree);
}

/** Messages from the head down its latest branch (what "Open that branch" would show). */
function belowHead(tree: TreeFields, headId: string): number {
  const leaf = latestLeafIn(tree, headId);
  return leaf === headId ? 0 : pathIds(tree, leaf).length - pathIds(tree, headId).length;
}

function rootBranchLength(tree: TreeFields): number {
  const roots = tree.children[ROOT_KEY] ?? [];
  const last = roots[roots.length - 1];
  return last === undefined ? 0 : pathIds(tree, latestLeafIn(tree, last)).length;
}

export interface Siblings { index: number; count: number; ids: string[] }

/** The message's place among its siblings, for the ‹ 2/3 › switcher (count 1: no fork here). */
export function siblingsIn(tree: TreeFields, messageId: string): Siblings {
  const m = tree.messages[messageId];
  if (!m) return { index: 0, count: 1, ids: [messageId] };
  const ids = tree.children[keyOf(m.parentId)] ?? [messageId];
  return { index: Math.max(0, ids.indexOf(messageId)), count: ids.length, ids: [...ids] };
}

/** Where "Open that branch" of a restored thread goes: the head's newest child (its tip follows). */
export function branchBelowHead(tree: TreeFields): string | null {
  const kids = tree.children[tree.headId ?? ROOT_KEY];
  return kids && kids.length > 0 ? kids[kids.length - 1]! : null;
}

/** A cheap shape check of a tree restored from saved state (an older build saved none). */
export function isTree(v: unknown): v is TreeFields {
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Partial<TreeFields>;
  return typeof t.messages === 'object' && t.messages !== null && typeof t.children === 'object' && t.children !== null
    && typeof t.runsByUser === 'object' && t.runsByUser !== null && typeof t.messageCount === 'number' && typeof t.leafCount === 'number';
}
