/**
 * Branch names that read as words (SPEC 5.4), shared by the engine and the clients: `main` stays
 * `main`; every other branch is named from its first prompt (`fix-login-redirect`) — a few
 * lowercase words, short, and unique within the thread (`-2`, `-3` on a repeat). The structural
 * branch ids (`main-<F>-<n>`, ./branches.ts) stay what commands take; names are for people.
 *
 * A branch's first prompt: the first user message on its path after the fork (an edited prompt);
 * when the branch has none (a regenerated or retried answer), the prompt the fork answers.
 */
import { MAIN_BRANCH, pathTo, type BranchInfo, type MessageTree, type TreeMessage } from './branches';

/** Most words a name takes from its prompt. */
export const MAX_BRANCH_NAME_WORDS = 4;
/** Longest name, before a uniqueness suffix (cut at a word boundary when possible). */
export const MAX_BRANCH_NAME_CHARS = 32;
/** The name when a prompt has no usable words. */
export const FALLBACK_BRANCH_NAME = 'branch';
/** Words that carry no meaning in a name ("please fix the login" → fix-login). */
const FILLER_WORDS = new Set([
  'a', 'an', 'the', 'to', 'of', 'in', 'on', 'for', 'and', 'or', 'at', 'by', 'with', 'from', 'into',
  'please', 'pls', 'can', 'could', 'would', 'will', 'you', 'me', 'my', 'i', 'we', 'our', 'us',
  'is', 'are', 'be', 'it', 'its', 'this', 'that', 'these', 'those', 'now', 'just', 'also', 'so',
  'then', 'again', 'let', 'lets', 'some', 'hey', 'hi',
]);

/** A prompt as a short slug of its first meaningful words (`FALLBACK_BRANCH_NAME` when there are none). */
export function promptSlug(prompt: string): string {
  const words = prompt
    .normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
    .toLowerCase().replace(/['’]/g, '')
    .split(/[^a-z0-9]+/).filter((w) => w.length > 0);
  const meaningful = words.filter((w) => !FILLER_WORDS.has(w));
  let slug = '';
  for (const w of (meaningful.length > 0 ? meaningful : words).slice(0, MAX_BRANCH_NAME_WORDS)) {
    const next = slug ? `${slug}-${w}` : w;
    if (next.length > MAX_BRANCH_NAME_CHARS) {
      if (!slug) slug = w.slice(0, MAX_BRANCH_NAME_CHARS);
      break;
    }
    slug = next;
  }
  return slug || FALLBACK_BRANCH_NAME;
}

/** The first prompt of `branch` (see the header); null when its path has no prompt at all. */
function firstPromptOf<M extends TreeMessage>(tree: MessageTree<M>, branch: BranchInfo, promptOf: (m: M) => string | null): string | null {
  const path = pathTo(tree, branch.leafId);
  const at = branch.forkMessageId === null ? -1 : path.findIndex((m) => m.id === branch.forkMessageId); // a fork among the roots: from the start
  for (let i = at + 1; i < path.length; i++) {
    const p = promptOf(path[i]!);
    if (p !== null) return p;
  }
  for (let i = at; i >= 0; i--) {
    const p = promptOf(path[i]!);
    if (p !== null) return p;
  }
  return null;
}

/**
 * Names of `branches` (from `branchesOf(tree)`), by branch id. `promptOf` gives a message's
 * prompt text when it is a user prompt, else null. Unique: the first branch (depth-first, so the
 * older) keeps the plain name; `main` is taken by the main branch.
 */
export function branchNames<M extends TreeMessage>(tree: MessageTree<M>, branches: readonly BranchInfo[], promptOf: (m: M) => string | null): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>([MAIN_BRANCH]);
  for (const b of branches) {
    if (b.branchId === MAIN_BRANCH) {
      names.set(b.branchId, MAIN_BRANCH);
      continue;
    }
    const base = promptSlug(firstPromptOf(tree, b, promptOf) ?? '');
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    names.set(b.branchId, name);
  }
  return names;
}
