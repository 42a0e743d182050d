/**
 * One glob dialect for rules' paths and permission paths (src/engine/platform/glob.ts): the
 * permission side matches parent directories and names at any depth, the rules side its anchors;
 * both read `**`, `?`, `{a,b}` and classes the same.
 */
import { strict as assert } from 'node:assert';
import { pathMatches } from '../../src/engine/permissions/path-globs';
import { matchesAny } from '../../src/engine/rules/glob';

describe('path globs: one dialect for rules and permissions', () => {
  const cases: [string, string, boolean][] = [
    ['.vscode/{tasks,launch}.json', '.vscode/tasks.json', true],
    ['.vscode/{tasks,launch}.json', '.vscode/launch.json', true],
    ['.vscode/{tasks,launch}.json', '.vscode/settings.json', false],
    ['src/[ab].ts', 'src/a.ts', true],
    ['src/[!ab].ts', 'src/a.ts', false],
    ['src/[!ab].ts', 'src/c.ts', true],
    ['**/*.pem', 'keys/deep/x.pem', true],
    ['*.pem', 'keys/deep/x.pem', true],
    ['src/?.ts', 'src/ab.ts', false],
    ['a.b', 'aXb', false],
  ];
  for (const [glob, rel, want] of cases) {
    it(`${glob} ${want ? 'matches' : 'does not match'} ${rel}, on both sides`, () => {
      assert.equal(pathMatches(glob, rel), want, 'permissions');
      assert.equal(matchesAny([glob], rel), want, 'rules');
    });
  }

  it('a permission glob covers what is under a matched directory; an unclosed class is literal', () => {
    assert.equal(pathMatches('.github', '.github/workflows/ci.yml'), true);
    assert.equal(pathMatches('{.husky,.githooks}', '.githooks/pre-commit'), true);
    assert.equal(pathMatches('a[b', 'a[b'), true);
    assert.equal(pathMatches('a[b', 'ab'), false);
  });
});
