/**
 * Which branches "Compare branches" shows, without VS Code: the active branch
 * first, then the others newest first, at most MAX_COMPARED_BRANCHES (src/protocol/branches.ts).
 * With more branches than fit, the caller asks the user, with these preselected.
 */
import { MAX_COMPARED_BRANCHES, MIN_COMPARED_BRANCHES } from '../../protocol/branches';
import type { BranchView } from '../../protocol/commands/branches';

export { MAX_COMPARED_BRANCHES, MIN_COMPARED_BRANCHES };

/** The branches in the order they are offered: active first, then by last update, newest first. */
export function offeredBranches(branches: readonly BranchView[]): BranchView[] {
  return [...branches].sort((a, b) => Number(b.active) - Number(a.active) || b.updatedAt - a.updatedAt);
}

/** The leaves compared by default: the first MAX_COMPARED_BRANCHES offered (null: fewer than two branches). */
export function defaultLeaves(branches: readonly BranchView[]): string[] | null {
  if (branches.length < MIN_COMPARED_BRANCHES) return null;
  return offeredBranches(branches).slice(0, MAX_COMPARED_BRANCHES).map((b) => b.leafId);
}

/** A user's pick is usable when it holds 2..MAX distinct leaves. */
export function validPick(leafIds: readonly string[]): boolean {
  return new Set(leafIds).size === leafIds.length && leafIds.length >= MIN_COMPARED_BRANCHES && leafIds.length <= MAX_COMPARED_BRANCHES;
}
