/**
 * The conversation as a tree (SPEC 5.4), as pure functions shared by the engine
 * and the webview: build the tree of a thread's messages (`parentId` links, input in any order),
 * name every leaf's branch (`main`, `main-<forkMessageId>-<n>`), the path to a message, the
 * latest leaf under one, a message's siblings (the ‹ 2/3 › switcher) and the divergence point of
 * 2..4 branches. Nothing here reads a store; the same input always gives the same answer.
 *
 * Ordering: a message's children (and the roots) are ordered by creation — `createdAt`, then
 * their order in the input — so the first-created child is index 0.
 *
 * Branch ids: the leaf reached from the first root by always taking the first child is `main`.
 * Any other leaf L is `main-<F>-<n>`, where F is the deepest message on L's path at which the
 * path takes a child other than the first, and n is that child's 0-based index among F's
 * children; when the deepest such fork is among the roots themselves, F is `root`.
 */
import { VoxError } from './wire/vox-error';
import type { ErrorDetailsOf } from './wire/error-details';

/** The id a fork among root messages uses in branch ids. */
export const ROOT_FORK = 'root';
/** The id of the branch that always takes the first child. */
export const MAIN_BRANCH = 'main';
/** Fewest and most branches `computeDivergencePoint` and `compareBranches` take (SPEC 5.4). */
export const MIN_COMPARED_BRANCHES = 2;
export const MAX_COMPARED_BRANCHES = 4;

/** A failure of the tree's operations (unknown message, wrong leaves, …); `details` are JSON facts. */
export class BranchError extends VoxError<'branch'> {
  override readonly name = 'BranchError';
  readonly domain = 'branch' as const;
  constructor(
    code: BranchError['code'],
    message: string,
    readonly details?: ErrorDetailsOf<'branch'>,
  ) {
    super(code, message);
  }
}

/** What the tree needs of a message. */
export interface TreeMessage {
  id: string;
  parentId: string | null;
  createdAt: number;
  /** When it was edited in place, if ever (counts as an update of its branch). */
  editedAt?: number | null;
}

export interface TreeNode<M extends TreeMessage> {
  readonly message: M;
  parent: TreeNode<M> | null;
  /** Ordered by creation (createdAt, then input order). */
  readonly children: TreeNode<M>[];
  /** 0 for a root. */
  depth: number;
  /** Index among its parent's children (or among the roots). */
  index: number;
  /** Position in the input (the tie-break after createdAt). */
  readonly order: number;
}

export interface MessageTree<M extends TreeMessage> {
  /** Messages without a (known) parent, ordered by creation. */
  readonly roots: TreeNode<M>[];
  readonly byId: ReadonlyMap<string, TreeNode<M>>;
  /** Messages whose parentId names no message of the input: they are treated as roots. */
  readonly orphans: string[];
  /** Ids that appeared more than once in the input: the first occurrence is kept. */
  readonly duplicates: string[];
  /** Messages whose parent chain looped back to them: the link was cut, they are roots. */
  readonly cycles: string[];
}

/** One leaf's branch. */
export interface BranchInfo {
  branchId: string;
  leafId: string;
  /** F of `main-<F>-<n>`; null for `main` and for a fork among the roots (`main-root-<n>`). */
  forkMessageId: string | null;
  /** Messages on the path from the root to the leaf. */
  length: number;
  /** Latest createdAt (or editedAt) on the path. */
  updatedAt: number;
}

const byCreation = <M extends TreeMessage>(a: TreeNode<M>, b: TreeNode<M>): number =>
  a.message.createdAt - b.message.createdAt || a.order - b.order;

/** Builds the tree; input in any order (children may come before their parents). */
export function buildTree<M extends TreeMessage>(messages: readonly M[]): MessageTree<M> {
  const byId = new Map<string, TreeNode<M>>();
  const nodes: TreeNode<M>[] = [];
  const duplicates: string[] = [];
  messages.forEach((message, order) => {
    if (byId.has(message.id)) {
      duplicates.push(message.id);
      return;
    }
    const node: TreeNode<M> = { message, parent: null, children: [], depth: -1, index: 0, order };
    byId.set(message.id, node);
    nodes.push(node);
  });
  const orphans: string[] = [];
  for (const n of nodes) {
    const p = n.message.parentId;
    if (p === null) continue;
    const parent = byId.get(p);
    if (parent) n.parent = parent;
    else orphans.push(n.message.id);
  }
  // Depths, iteratively (a 10,000-message chain must not overflow a stack); a loop is cut where found.
  const cycles: string[] = [];
  const visiting = new Set<TreeNode<M>>();
  for (const n of nodes) {
    for (;;) {
      const stack: TreeNode<M>[] = [];
      let cur: TreeNode<M> | null = n;
      while (cur && cur.depth < 0 && !visiting.has(cur)) {
        visiting.add(cur);
        stack.push(cur);
        cur = cur.parent;
      }
      for (const s of stack) visiting.delete(s);
      if (cur && cur.depth < 0) {
        cur.parent = null;
        cycles.push(cur.message.id);
        continue;
      }
      let d = cur ? cur.depth : -1;
      for (let i = stack.length - 1; i >= 0; i--) stack[i]!.depth = ++d;
      break;
    }
  }
  const roots: TreeNode<M>[] = [];
  for (const n of nodes) (n.parent ? n.parent.children : roots).push(n);
  const order = (list: TreeNode<M>[]) => {
    list.sort(byCreation);
    list.forEach((c, i) => (c.index = i));
  };
  order(roots);
  for (const n of nodes) if (n.children.length > 1) order(n.children);
  return { roots, byId, orphans, duplicates, cycles };
}

function nodeOf<M extends TreeMessage>(tree: MessageTree<M>, id: string): TreeNode<M> {
  const n = tree.byId.get(id);
  if (!n) throw new BranchError('unknownMessage', `message ${id} is not in this conversation`, { messageId: id });
  return n;
}

/** The branch id of a leaf whose deepest fork is `fork` at child `index` (null fork: `main`). */
export function branchIdOf(fork: { messageId: string; index: number } | null): string {
  return fork === null ? MAIN_BRANCH : `${MAIN_BRANCH}-${fork.messageId}-${fork.index}`;
}

/** Every leaf's branch, in depth-first order (so `main` comes first). O(messages). */
export function branchesOf<M extends TreeMessage>(tree: MessageTree<M>): BranchInfo[] {
  const out: BranchInfo[] = [];
  type Frame = { node: TreeNode<M>; fork: { messageId: string; index: number } | null; updatedAt: number };
  const stack: Frame[] = [];
  const stamp = (m: M) => Math.max(m.createdAt, m.editedAt ?? 0);
  for (let i = tree.roots.length - 1; i >= 0; i--) {
    const r = tree.roots[i]!;
    stack.push({ node: r, fork: i === 0 ? null : { messageId: ROOT_FORK, index: i }, updatedAt: stamp(r.message) });
  }
  while (stack.length > 0) {
    const { node, fork, updatedAt } = stack.pop()!;
    if (node.children.length === 0) {
      out.push({
        branchId: branchIdOf(fork), leafId: node.message.id,
        forkMessageId: fork === null || fork.messageId === ROOT_FORK ? null : fork.messageId,
        length: node.depth + 1, updatedAt,
      });
      continue;
    }
    for (let i = node.children.length - 1; i >= 0; i--) {
      const c = node.children[i]!;
      stack.push({ node: c, fork: i === 0 ? fork : { messageId: node.message.id, index: i }, updatedAt: Math.max(updatedAt, stamp(c.message)) });
    }
  }
  return out;
}

/** The messages from the root to `id` (inclusive). */
export function pathTo<M extends TreeMessage>(tree: MessageTree<M>, id: string): M[] {
  const path: M[] = [];
  for (let n: TreeNode<M> | null = nodeOf(tree, id); n; n = n.parent) path.push(n.message);
  return path.reverse();
}

/** The leaf reached from `id` by always following its most recently created child (`id` itself when it is a leaf). */
export function latestLeafUnder<M extends TreeMessage>(tree: MessageTree<M>, id: string): string {
  let n = nodeOf(tree, id);
  while (n.children.length > 0) n = n.children[n.children.length - 1]!;
  return n.message.id;
}

/** `id` among its siblings (its parent's children, or the roots): for the ‹ index+1/count › switcher. */
export function siblingsOf<M extends TreeMessage>(tree: MessageTree<M>, id: string): { index: number; count: number; ids: string[] } {
  const n = nodeOf(tree, id);
  const list = n.parent ? n.parent.children : tree.roots;
  return { index: n.index, count: list.length, ids: list.map((c) => c.message.id) };
}

/**
 * Where 2..4 paths (message ids from the root) part (SPEC 5.4): `index` is how many leading
 * messages all share, `messageId` the deepest shared one (null when they share none). Identical
 * paths share everything; a path that is a prefix of another shares the whole prefix.
 */
export function computeDivergencePoint(paths: readonly (readonly string[])[]): { index: number; messageId: string | null } {
  if (paths.length < MIN_COMPARED_BRANCHES || paths.length > MAX_COMPARED_BRANCHES) {
    throw new BranchError('badLeaves', `the divergence point takes ${MIN_COMPARED_BRANCHES} to ${MAX_COMPARED_BRANCHES} branches, not ${paths.length}`, {
      count: paths.length, max: MAX_COMPARED_BRANCHES,
    });
  }
  const first = paths[0]!;
  let index = 0;
  const shortest = Math.min(...paths.map((p) => p.length));
  while (index < shortest && paths.every((p) => p[index] === first[index])) index++;
  return { index, messageId: index > 0 ? first[index - 1]! : null };
}
