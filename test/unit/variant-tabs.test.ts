/**
 * The variants' editor tabs (src/extension/variant-tabs.ts): a "Variant #n vs base" diff that VS
 * Code restores after a reload is stale once its variant was adopted, discarded or cleared (its
 * worktree is gone) and is closed; the titles say the files are in a variant's worktree.
 */
import { strict as assert } from 'node:assert';
import { openedDiffsAfter, staleVariantDiffs, tabShowsDiff, variantDiffTitle, variantWorktreeLabel, type OpenedVariantDiff } from '../../src/extension/variant-tabs';
import type { VariantPoolView, VariantView } from '../../src/protocol/commands/variants';

const variant = (index: number, status: VariantView['status'], threadId = `thr:${index}`): VariantView => ({
  index, model: 'm', worktreePath: `/r/.vox/worktrees/muse/t/variant-${index}`, threadId, runId: null, status,
  stats: { files: [], additions: 0, deletions: 0 }, error: null, statsError: null,
});
const pool = (poolId: string, variants: VariantView[], adopted: number | null = null): VariantPoolView => ({ poolId, prompt: 'p', base: 'b', adopted, variants });

describe('variant diff tabs', () => {
  it("a restored diff of an adopted, discarded, cleared or unknown variant is stale; a live one is not", () => {
    const opened: OpenedVariantDiff[] = [
      { poolId: 'p1', index: 1, title: variantDiffTitle({ index: 1, model: 'm' }) },
      { poolId: 'p1', index: 2, title: variantDiffTitle({ index: 2, model: 'm' }) },
      { poolId: 'p2', index: 1, title: 'x' },
      { poolId: 'p3', index: 1, title: 'y' },
    ];
    const pools = [pool('p1', [variant(1, 'adopted'), variant(2, 'completed')], 1), pool('p3', [variant(1, 'discarded')])];
    assert.deepEqual(staleVariantDiffs(opened, pools).map((d) => `${d.poolId}#${d.index}`), ['p1#1', 'p2#1', 'p3#1']);
    assert.deepEqual(openedDiffsAfter(opened, pools).map((d) => `${d.poolId}#${d.index}`), ['p1#2']);
  });

  it("a multi-diff tab is found by its title with VS Code's file count after it (measured in code-server 4.100)", () => {
    const title = variantDiffTitle({ index: 1, model: 'openai:muse-beta' });
    assert.ok(tabShowsDiff(`${title} (1 file)`, title));
    assert.ok(tabShowsDiff(`${title} (12 files)`, title));
    assert.ok(tabShowsDiff(title, title));
    assert.ok(!tabShowsDiff(variantDiffTitle({ index: 11, model: 'openai:muse-beta' }) + ' (1 file)', title));
    assert.ok(!tabShowsDiff(`${title} extra`, title));
  });

  it("titles say the files are in a variant's worktree", () => {
    assert.match(variantDiffTitle({ index: 1, model: 'gpt' }), /^Variant #1 \(gpt\) vs base .*worktree/);
    const pools = [pool('p1', [variant(1, 'running', 'thr:a'), variant(2, 'running', 'thr:b')])];
    assert.equal(variantWorktreeLabel(pools, 'thr:b'), "variant #2's worktree");
    assert.equal(variantWorktreeLabel(pools, 'thr:main'), null);
  });
});
