/**
 * The conversation tree's pure functions (src/protocol/branches.ts) and the unified diff of
 * compared answers: tree building from input in any order (property-style over seeded shuffles,
 * children before parents), orphans / duplicates / cycles reported, branch ids checked against a
 * naive walk, latest leaf, siblings, the divergence point of 2..4 paths (identical, prefix, none
 * shared, bad counts), and a 10,000-message chain (no recursion limit).
 */
import { strict as assert } from 'node:assert';
import {
  BranchError, branchesOf, buildTree, computeDivergencePoint, latestLeafUnder, pathTo, siblingsOf, type MessageTree, type TreeMessage,
} from '../../src/protocol/branches';
import { unifiedDiff } from '../../src/engine/branches/unified-diff';
import { Rng } from '../support/random';

const msg = (id: string, parentId: string | null, createdAt: number): TreeMessage => ({ id, parentId, createdAt });

function shuffle<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Each message's children ids and its depth: the shape of a tree, independent of input order. */
function shape(tree: MessageTree<TreeMessage>): Record<string, { children: string[]; depth: number }> {
  const out: Record<string, { children: string[]; depth: number }> = {};
  for (const [id, n] of tree.byId) out[id] = { children: n.children.map((c) => c.message.id), depth: n.depth };
  return out;
}

/** Branch ids by the definition, walking each leaf's path from the root (independent of branchesOf). */
function naiveBranchIds(tree: MessageTree<TreeMessage>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, n] of tree.byId) {
    if (n.children.length > 0) continue;
    const path = pathTo(tree, id);
    let name = 'main';
    path.forEach((m, depth) => {
      const s = siblingsOf(tree, m.id);
      if (s.index > 0) name = `main-${depth === 0 ? 'root' : path[depth - 1]!.id}-${s.index}`;
    });
    out.set(id, name);
  }
  return out;
}

describe('conversation tree: building and naming branches', () => {
  it('children before their parents in the input build the same tree', () => {
    const ordered = [msg('a', null, 1), msg('b', 'a', 2), msg('c', 'b', 3), msg('c2', 'b', 4), msg('b2', 'a', 5)];
    const reversed = [...ordered].reverse();
    const t1 = buildTree(ordered);
    const t2 = buildTree(reversed);
    assert.deepEqual(shape(t2), shape(t1));
    assert.deepEqual(t2.roots.map((r) => r.message.id), ['a']);
    assert.deepEqual(shape(t1).b, { children: ['c', 'c2'], depth: 1 });
    assert.deepEqual(t2.orphans, []);
  });

  it('property: any shuffle of a random tree gives the same shape, paths and branch ids (200 seeded trees)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rng = new Rng(seed);
      const n = 1 + rng.int(60);
      const messages: TreeMessage[] = [];
      for (let i = 0; i < n; i++) {
        // Mostly a child of a recent message (long paths), sometimes a new fork, rarely a new root.
        const parent = i === 0 || rng.int(20) === 0 ? null : messages[Math.max(0, i - 1 - rng.int(Math.min(i, rng.int(3) === 0 ? i : 3)))]!.id;
        messages.push(msg(`m${i}`, parent, 1_000 + i * 10));
      }
      const reference = buildTree(messages);
      const refBranches = branchesOf(reference);
      const naive = naiveBranchIds(reference);
      assert.equal(refBranches.length, naive.size, `seed ${seed}: one branch per leaf`);
      for (const b of refBranches) assert.equal(b.branchId, naive.get(b.leafId), `seed ${seed}: branch of ${b.leafId}`);
      assert.equal(new Set(refBranches.map((b) => b.branchId)).size, refBranches.length, `seed ${seed}: branch ids are unique`);
      assert.equal(refBranches[0]!.branchId, 'main');
      for (let k = 0; k < 5; k++) {
        const t = buildTree(shuffle(rng, messages));
        assert.deepEqual(shape(t), shape(reference), `seed ${seed}: shape`);
        assert.deepEqual(branchesOf(t), refBranches, `seed ${seed}: branches`);
        for (const b of refBranches) {
          const p = pathTo(t, b.leafId);
          assert.equal(p.length, b.length);
          assert.equal(p[0]!.parentId, null);
          for (let i = 1; i < p.length; i++) assert.equal(p[i]!.parentId, p[i - 1]!.id);
        }
      }
    }
  });

  it('names branches main, main-<fork>-<n> at the deepest fork, and main-root-<n> for a second root', () => {
    const t = buildTree([
      msg('A', null, 1), msg('B', 'A', 2), msg('C', 'B', 3), msg('C2', 'B', 4), msg('B2', 'A', 5),
      msg('R2', null, 6), msg('X', 'R2', 7), msg('X2', 'R2', 8), msg('C3', 'B', 9), msg('D', 'C2', 10),
    ]);
    const ids = Object.fromEntries(branchesOf(t).map((b) => [b.leafId, [b.branchId, b.forkMessageId, b.length]]));
    assert.deepEqual(ids, {
      C: ['main', null, 3], D: ['main-B-1', 'B', 4], C3: ['main-B-2', 'B', 3], B2: ['main-A-1', 'A', 2],
      X: ['main-root-1', null, 2], X2: ['main-R2-1', 'R2', 2],
    });
    assert.deepEqual(branchesOf(t).map((b) => b.leafId), ['C', 'D', 'C3', 'B2', 'X', 'X2'], 'depth-first, main first');
  });

  it('orders children by createdAt, then input order; updatedAt counts edits', () => {
    const t = buildTree([msg('r', null, 1), msg('late', 'r', 9), msg('tie1', 'r', 5), msg('tie2', 'r', 5), { id: 'e', parentId: 'tie1', createdAt: 6, editedAt: 50 }]);
    assert.deepEqual(siblingsOf(t, 'tie2'), { index: 1, count: 3, ids: ['tie1', 'tie2', 'late'] });
    assert.deepEqual(siblingsOf(t, 'r'), { index: 0, count: 1, ids: ['r'] });
    assert.equal(latestLeafUnder(t, 'r'), 'late');
    assert.equal(latestLeafUnder(t, 'tie1'), 'e');
    assert.equal(latestLeafUnder(t, 'e'), 'e');
    assert.equal(branchesOf(t).find((b) => b.leafId === 'e')!.updatedAt, 50);
  });

  it('reports unknown parents (as roots), duplicate ids (first kept) and parent cycles (cut)', () => {
    const t = buildTree([msg('a', 'ghost', 1), msg('b', 'a', 2), msg('b', null, 3), msg('x', 'y', 4), msg('y', 'x', 5), msg('s', 's', 6)]);
    assert.deepEqual(t.orphans, ['a']);
    assert.deepEqual(t.duplicates, ['b']);
    assert.equal(t.cycles.length, 2);
    assert.deepEqual(t.roots.map((r) => r.message.id).sort(), ['a', 's', t.cycles.find((c) => c !== 's')!].sort());
    assert.equal(t.byId.get('b')!.message.parentId, 'a');
    for (const n of t.byId.values()) assert.ok(n.depth >= 0);
    assert.equal(branchesOf(t).length, 3);
  });

  it('unknown ids are a typed error', () => {
    const t = buildTree([msg('a', null, 1)]);
    for (const f of [() => pathTo(t, 'nope'), () => latestLeafUnder(t, 'nope'), () => siblingsOf(t, 'nope')]) {
      assert.throws(f, (e: unknown) => e instanceof BranchError && e.code === 'unknownMessage' && e.details?.messageId === 'nope');
    }
  });

  it('a 10,000-message chain with forks builds and names without recursion', () => {
    const messages: TreeMessage[] = [];
    for (let i = 0; i < 10_000; i++) messages.push(msg(`m${i}`, i === 0 ? null : `m${i - 1}`, i));
    for (let i = 0; i < 50; i++) messages.push(msg(`f${i}`, `m${i * 100}`, 20_000 + i));
    const t = buildTree(shuffle(new Rng(7), messages));
    const b = branchesOf(t);
    assert.equal(b.length, 51);
    assert.equal(b[0]!.branchId, 'main');
    assert.equal(b[0]!.length, 10_000);
    assert.equal(pathTo(t, 'm9999').length, 10_000);
    assert.equal(b.find((x) => x.leafId === 'f3')!.branchId, 'main-m300-1');
  });
});

describe('conversation tree: the divergence point of 2..4 branches', () => {
  const A = ['u1', 'a1', 'u2', 'a2'];
  it('two, three and four branches', () => {
    assert.deepEqual(computeDivergencePoint([A, ['u1', 'a1', 'u2', 'b2']]), { index: 3, messageId: 'u2' });
    assert.deepEqual(computeDivergencePoint([A, ['u1', 'a1', 'u2', 'b2'], ['u1', 'c1']]), { index: 1, messageId: 'u1' });
    assert.deepEqual(computeDivergencePoint([A, ['u1', 'a1', 'u2', 'b2'], ['u1', 'a1', 'x'], ['u1', 'a1', 'u2', 'a2', 'more']]), { index: 2, messageId: 'a1' });
  });
  it('identical branches share everything; a prefix shares itself; disjoint share nothing', () => {
    assert.deepEqual(computeDivergencePoint([A, [...A]]), { index: 4, messageId: 'a2' });
    assert.deepEqual(computeDivergencePoint([A, [...A], [...A], [...A]]), { index: 4, messageId: 'a2' });
    assert.deepEqual(computeDivergencePoint([['u1', 'a1'], A]), { index: 2, messageId: 'a1' });
    assert.deepEqual(computeDivergencePoint([A, ['u1', 'a1']]), { index: 2, messageId: 'a1' });
    assert.deepEqual(computeDivergencePoint([A, ['z']]), { index: 0, messageId: null });
    assert.deepEqual(computeDivergencePoint([[], A]), { index: 0, messageId: null });
  });
  it('fewer than 2 or more than 4 branches: branch/badLeaves', () => {
    for (const paths of [[A], [A, A, A, A, A], []]) {
      assert.throws(() => computeDivergencePoint(paths), (e: unknown) => e instanceof BranchError && e.code === 'badLeaves' && e.details?.count === paths.length);
    }
  });
});

describe('unified diff of two answers', () => {
  it('hunks with three lines of context, merged when close, numbered like diff -u', () => {
    const before = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'].join('\n') + '\n';
    const after = before.replace('two\n', 'TWO\n').replace('eleven\n', '');
    assert.equal(unifiedDiff(before, after, { before: 'main', after: 'main-x-1' }), [
      '--- a/main', '+++ b/main-x-1',
      '@@ -1,5 +1,5 @@', ' one', '-two', '+TWO', ' three', ' four', ' five',
      '@@ -8,5 +8,4 @@', ' eight', ' nine', ' ten', '-eleven', ' twelve', '',
    ].join('\n'));
  });
  it('marks a last line without a newline; identical texts give nothing; empty against text', () => {
    assert.equal(unifiedDiff('same', 'same', { before: 'a', after: 'b' }), '');
    assert.equal(unifiedDiff('old', 'new', { before: 'a', after: 'b' }), '--- a/a\n+++ b/b\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n');
    assert.equal(unifiedDiff('', 'x\n', { before: 'a', after: 'b' }), '--- a/a\n+++ b/b\n@@ -0,0 +1 @@\n+x\n');
  });
});
