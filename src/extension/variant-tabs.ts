/**
 * What the variants' editor tabs say and which of them are stale (pure: no `vscode` import, so
 * it is unit-tested in Node). A "Variant #n vs base" diff is a multi-diff editor VS Code restores
 * by itself after a reload; once its variant was adopted, discarded or cleared, its worktree is
 * gone and the tab would show missing files — the variants view closes it (variants-view.ts
 * remembers which diffs it opened in the workspace state). Titles and the view's description say
 * the files are in a variant's worktree, not the user's workspace.
 */
import type { VariantPoolView } from '../protocol/commands/variants';

/** The workspace-state key of the variant diffs the view opened (poolId, index, tab title). */
export const OPENED_VARIANT_DIFFS_KEY = 'vox.variants.openedDiffs';
/** The Variants view's description: where the variants' files are. */
export const VARIANTS_VIEW_DESCRIPTION = "each variant in its own worktree (.vox/worktrees/)";
/** Variant statuses whose worktree is gone (so a diff of it is stale). */
const GONE_STATUSES = new Set(['adopted', 'discarded']);

export interface OpenedVariantDiff { poolId: string; index: number; title: string }

/** The title of a variant's "all changes" diff. */
export function variantDiffTitle(v: { index: number; model: string }): string {
  return `Variant #${v.index} (${v.model}) vs base — in the variant's worktree`;
}

/** "variant #n's worktree" when `threadId` is a variant's thread (its tool calls act there), else null. */
export function variantWorktreeLabel(pools: readonly VariantPoolView[], threadId: string): string | null {
  for (const p of pools) for (const v of p.variants) if (v.threadId === threadId) return `variant #${v.index}'s worktree`;
  return null;
}

/**
 * Whether an editor tab shows the diff titled `title`: VS Code's multi-diff editor labels its tab
 * with the title and then the file count ("… (1 file)", "… (3 files)").
 */
export function tabShowsDiff(label: string, title: string): boolean {
  return label === title || (label.startsWith(`${title} (`) && label.endsWith(')'));
}

function isLive(d: OpenedVariantDiff, pools: readonly VariantPoolView[]): boolean {
  const v = pools.find((p) => p.poolId === d.poolId)?.variants.find((x) => x.index === d.index);
  return v !== undefined && !GONE_STATUSES.has(v.status);
}

/** The opened diffs whose variant no longer has a worktree (adopted, discarded, cleared, unknown). */
export function staleVariantDiffs(opened: readonly OpenedVariantDiff[], pools: readonly VariantPoolView[]): OpenedVariantDiff[] {
  return opened.filter((d) => !isLive(d, pools));
}

/** The opened diffs still worth remembering. */
export function openedDiffsAfter(opened: readonly OpenedVariantDiff[], pools: readonly VariantPoolView[]): OpenedVariantDiff[] {
  return opened.filter((d) => isLive(d, pools));
}
