/**
 * Branch names read as words (SPEC 5.4): each branch but `main` is named from its first prompt
 * (`fix-login-redirect`), short and unique within the thread; ids stay structural.
 */
import { strict as assert } from 'node:assert';
import { branchesOf, buildTree } from '../../src/protocol/branches';
import { branchNames, promptSlug, MAX_BRANCH_NAME_CHARS } from '../../src/protocol/branch-names';

interface Msg { id: string; parentId: string | null; createdAt: number; role: 'user' | 'assistant'; content: string }
let clock = 0;
const u = (id: string, parentId: string | null, content: string): Msg => ({ id, parentId, createdAt: ++clock, role: 'user', content });
const a = (id: string, parentId: string | null, content = 'ok'): Msg => ({ id, parentId, createdAt: ++clock, role: 'assistant', content });
const promptOf = (m: Msg) => (m.role === 'user' ? m.content : null);

describe('branch names from prompts', () => {
  it('slugs a prompt into a few lowercase words, dropping filler and punctuation', () => {
    assert.equal(promptSlug('Please fix the login redirect!'), 'fix-login-redirect');
    assert.equal(promptSlug('Can you make the café menu load faster on mobile devices today?'), 'make-cafe-menu-load');
    assert.equal(promptSlug('   '), 'branch');
    assert.equal(promptSlug('🙂 ?!'), 'branch');
    const long = promptSlug('internationalisation localisation accessibility performance');
    assert.ok(long.length <= MAX_BRANCH_NAME_CHARS, long);
    assert.match(long, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it("names each branch from its first prompt, not main-msg:<id>-1; unique; main stays main", () => {
    const msgs = [
      u('msg:u1', null, 'Add a settings page'), a('msg:a1', 'msg:u1'),
      u('msg:u2', 'msg:a1', 'now the login redirect'), a('msg:a2', 'msg:u2'),
      // the user edited their second prompt twice: two new branches
      u('msg:u2b', 'msg:a1', 'Fix the login redirect'), a('msg:a2b', 'msg:u2b'),
      u('msg:u2c', 'msg:a1', 'fix the login redirect!!'), a('msg:a2c', 'msg:u2c'),
      // a regenerated answer: the branch's prompt is the one it answers
      a('msg:a1r', 'msg:u1'),
    ];
    const tree = buildTree(msgs);
    const branches = branchesOf(tree);
    const names = branchNames(tree, branches, promptOf);
    const byLeaf = Object.fromEntries(branches.map((b) => [b.leafId, names.get(b.branchId)]));
    assert.deepEqual(byLeaf, {
      'msg:a2': 'main',
      'msg:a2b': 'fix-login-redirect',
      'msg:a2c': 'fix-login-redirect-2',
      'msg:a1r': 'add-settings-page',
    });
    for (const n of names.values()) assert.ok(!n.includes('msg:'), n);
  });
});
