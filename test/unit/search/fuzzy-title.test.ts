import { strict as assert } from 'node:assert';
import {
  MIN_TITLE_SCORE, RECENT_MS, TITLE_WEIGHT, bestTier, bestTierPrepared, foldText, inOrderMatch, prepareQuery, rankTitles, tierScores, titleScore,
} from '../../../src/engine/search/fuzzy-title';
import { seededRandom } from '../../support/random';

const T = 'fix the login bug'; // t = 17
const close = (a: number | undefined | null, b: number) => assert.ok(a !== undefined && a !== null && Math.abs(a - b) < 1e-12, `${a} ≈ ${b}`);

describe('search: fuzzy title score (SPEC 6.4), tier by tier', () => {
  it('folds case, width (NFKC) and white space; words are letter/digit runs', () => {
    assert.equal(foldText('  Fix:\tLOGIN   Bug '), 'fix: login bug');
    assert.equal(foldText('Ｌｏｇｉｎ'), 'login');
    assert.deepEqual(bestTier('fix login bug', 'Fix: login-bug'), { tier: 'allWords', base: 0.9 });
  });

  it('exact: 1.0 after folding', () => {
    assert.deepEqual(bestTier('FIX the  login bug', T), { tier: 'exact', base: 1.0 });
  });

  it('substring: 0.8 + 0.2·q/t', () => {
    const b = bestTier('log', T);
    assert.equal(b?.tier, 'substring');
    close(b?.base, 0.8 + (0.2 * 3) / 17);
    // the other tiers that hold for it score lower: prefix 0.6, in-order 0.5·3/3 + 0.2·3/3
    const all = new Map(tierScores('log', T).map((s) => [s.tier, s.base]));
    close(all.get('prefix'), 0.6);
    close(all.get('inOrder'), 0.7);
  });

  it('all words: 0.9 (words in another order, so not a substring)', () => {
    assert.deepEqual(bestTier('bug login', T), { tier: 'allWords', base: 0.9 });
    // a whole word beats the same word as a short substring: max(0.9, 0.8 + 0.2·5/17)
    assert.deepEqual(bestTier('login', T), { tier: 'allWords', base: 0.9 });
  });

  it('partial words: 0.7·matched/total', () => {
    const b = bestTier('deploy login', 'login page');
    assert.equal(b?.tier, 'partialWords');
    close(b?.base, 0.35);
    // 1 of 3 words: 0.7/3 = 0.233…, and in-order 0.5·5/16 + 0.2·5/16 = 0.21875: under the minimum
    close(tierScores('login crash report', T).find((s) => s.tier === 'partialWords')?.base, 0.7 / 3);
    close(tierScores('login crash report', T).find((s) => s.tier === 'inOrder')?.base, 0.21875);
    assert.equal(bestTier('login crash report', T), null);
  });

  it('prefix: 0.6 when every query word starts a title word', () => {
    assert.deepEqual(bestTier('bu lo', T), { tier: 'prefix', base: 0.6 });
    close(tierScores('bu lo', T).find((s) => s.tier === 'inOrder')?.base, 0.5 * 2 / 4 + 0.2 * 2 / 4);
  });

  it('in-order characters: 0.5·matched/q + 0.2·maxRun/q, greedy, missing characters skipped', () => {
    assert.deepEqual(inOrderMatch('fxlgn', T), { matched: 5, maxRun: 1, q: 5 });
    const b = bestTier('fxlgn', T);
    assert.equal(b?.tier, 'inOrder');
    close(b?.base, 0.5 + 0.2 / 5);
    // spaces do not count; "logbu": l-o-g adjacent (run 3), b, u adjacent (run 2)
    assert.deepEqual(inOrderMatch('log bu', T), { matched: 5, maxRun: 3, q: 5 });
    // f, x found; the two z are not: 0.5·2/4 + 0.2·1/4 = 0.3, the minimum, still a match
    assert.deepEqual(inOrderMatch('fxzz', T), { matched: 2, maxRun: 1, q: 4 });
    close(bestTier('fxzz', T)?.base, 0.3);
    assert.equal(bestTier('fzzz', T), null); // 0.5/4 + 0.2/4 = 0.175
  });

  it('min 0.3, +0.05 for a thread updated in the last 24 h, ×1.4 for titles', () => {
    const now = 10 * RECENT_MS;
    close(titleScore('bug login', T, now - 1000, now), (0.9 + 0.05) * TITLE_WEIGHT);
    close(titleScore('bug login', T, now - RECENT_MS - 1, now), 0.9 * 1.4);
    assert.equal(titleScore('qqq', T, now, now), null);
    assert.equal(MIN_TITLE_SCORE, 0.3);
    assert.equal(titleScore('', T, now, now), null);
  });

  it('ranks best first; ties go to the newer thread, then the id', () => {
    const now = 100 * RECENT_MS;
    const old = now - 5 * RECENT_MS;
    const ranked = rankTitles('login', [
      { id: 'c', title: 'login', updatedAt: old },
      { id: 'b', title: 'the login page', updatedAt: old },
      { id: 'a', title: 'the login page', updatedAt: old },
      { id: 'd', title: 'the login page', updatedAt: old + 1 },
      { id: 'e', title: 'unrelated', updatedAt: now },
      { id: 'f', title: 'logout', updatedAt: now },
    ], now, 10);
    assert.deepEqual(ranked.map((r) => r.thread.id), ['c', 'd', 'a', 'b', 'f']);
    close(ranked[0]!.score, 1.4);
    assert.equal(ranked[4]!.tier, 'inOrder'); // l-o-g found (run 3), "logout" has no i or n: 0.5·3/5 + 0.2·3/5
    close(ranked[4]!.score, (0.5 * 3 / 5 + 0.2 * 3 / 5 + 0.05) * 1.4);
    assert.equal(rankTitles('login', [{ id: 'x', title: 'login', updatedAt: 0 }], now, 0).length, 0);
  });
});

describe('search: the fast title path equals the tier table', () => {
  it('bestTierPrepared = the max of tierScores (ties in table order) over 20,000 generated pairs', () => {
    const vocab = ['fix', 'login', 'bug', 'log', 'in', 'parser', 'pars', 'token', 'tok', 'the', 'a', 'Deploy', 'staging', 'é', 'x1', 'io'];
    const rnd = seededRandom(7);
    const phrase = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rnd() * vocab.length)]!).join(rnd() < 0.2 ? '-' : ' ');
    for (let i = 0; i < 20_000; i++) {
      const q = phrase(1 + Math.floor(rnd() * 3));
      const t = phrase(1 + Math.floor(rnd() * 5));
      const slow = bestTier(q, t);
      const fast = bestTierPrepared(prepareQuery(q), foldText(t));
      assert.equal(fast?.base ?? null, slow?.base ?? null, `${q} / ${t}`);
      assert.equal(fast?.tier ?? null, slow?.tier ?? null, `${q} / ${t}`);
    }
  });
});
