/**
 * Which branches "Compare branches" shows (src/extension/compare/leaves.ts) and how the compare
 * tab reads what it is posted (webview/src/compare/data.ts): active first then newest, at most
 * four, a pick of 2..4 distinct leaves; a payload checked with the protocol's validators; a
 * unified diff split into coloured lines.
 */
import { strict as assert } from 'node:assert';
import { defaultLeaves, offeredBranches, validPick } from '../../src/extension/compare/leaves';
import { decodePayload, diffLines } from '../../webview/src/compare/data';

const b = (leafId: string, updatedAt: number, active = false) => ({ branchId: `main-${leafId}`, name: `branch-${leafId}`, leafId, forkMessageId: null, length: 2, updatedAt, active });

describe('compare branches: which leaves, and the tab\'s payload', () => {
  it('offers the active branch first, then the newest; compares at most four; a pick needs 2..4 distinct leaves', () => {
    const branches = [b('a', 1), b('b', 5), b('c', 3, true), b('d', 4), b('e', 2)];
    assert.deepEqual(offeredBranches(branches).map((x) => x.leafId), ['c', 'b', 'd', 'e', 'a']);
    assert.deepEqual(defaultLeaves(branches), ['c', 'b', 'd', 'e']);
    assert.deepEqual(defaultLeaves([b('a', 1), b('b', 2)]), ['b', 'a']);
    assert.equal(defaultLeaves([b('a', 1)]), null);
    assert.equal(validPick(['a']), false);
    assert.equal(validPick(['a', 'a']), false);
    assert.equal(validPick(['a', 'b', 'c', 'd', 'e']), false);
    assert.equal(validPick(['a', 'b', 'c', 'd']), true);
  });

  it('decodes a payload with the protocol\'s validators; a broken one is an Error, not a half page', () => {
    const m = (id: string) => ({ id, threadId: 't', parentId: null, role: 'assistant', content: id, runId: null, status: 'complete', createdAt: 1 });
    const data = { divergence: { index: 0, messageId: null }, shared: [], columns: [{ leafId: 'a', branchId: 'main', name: 'main', messages: [m('a')] }, { leafId: 'b', branchId: 'main-root-1', name: 'fix-login', messages: [m('b')] }], finalDiffs: [] };
    const ok = decodePayload({ type: 'compare', threadTitle: 'T', branches: [b('a', 1, true), b('b', 2)], data });
    assert.ok(!(ok instanceof Error), String(ok));
    assert.equal(ok.data.columns.length, 2);
    assert.ok(decodePayload({ type: 'compare', threadTitle: 'T', branches: [b('a', 1)], data }) instanceof Error, 'labels and columns must match');
    assert.ok(decodePayload({ type: 'compare', threadTitle: 'T', branches: [], data: { ...data, divergence: { index: 'x' } } }) instanceof Error);
    assert.ok(decodePayload('nope') instanceof Error);
  });

  it('splits a unified diff into header, hunk, added, removed and context lines', () => {
    assert.deepEqual(diffLines('--- a\n+++ b\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n').map((l) => l.kind), ['head', 'head', 'hunk', 'same', 'del', 'add']);
    assert.deepEqual(diffLines(''), []);
  });
});
