/**
 * Managed worktrees against real git repositories (SPEC §4.1, §4.3): layout, info/exclude,
 * `.env*` provisioning, path validation, link-safe removal, lock/linkage refusals, lease
 * serialisation, and that the user's HEAD/branch/index/stash never move.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createManagedWorktree,
  listManagedWorktrees,
  removeManagedWorktree,
  validateManagedWorktreePath,
  managedWorktreePath,
  repoGroupName,
  slugify,
  WorktreeError,
  VOX_EXCLUDE_LINE,
  VOX_EXCLUDE_MARKER,
  migrateVoxExclude,
} from '../../src/engine/worktrees/worktrees';
import { startTestEngine } from '../support/test-engine';
import { variantLocation } from '../../src/engine/variants/pool';
import { workspaceLeases } from '../../src/engine/platform/workspace-lease';
import { removeTreeNoFollow } from '../../src/engine/platform/safe-remove';
import { git } from '../support/git';
import { sleep, waitFor } from '../support/wait';
import { commitAll, makeRepo, makeSandbox, snapshotFiles, userState, writeFile, type Sandbox } from '../support/worktree-fixtures';
import { assertRejectsCode } from '../support/assert-code';

function excludeLines(repo: string): string[] {
  return fs.readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8').split('\n');
}

function adminEntries(repo: string): string[] {
  const dir = path.join(repo, '.git', 'worktrees');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

describe('managed worktrees', () => {
  let sb: Sandbox;
  let repo: string;
  beforeEach(() => {
    sb = makeSandbox();
    repo = makeRepo(sb, 'app', { files: { 'src/index.ts': 'export {};\n' } });
  });
  afterEach(() => sb.cleanup());

  describe('create, list, remove', () => {
    it('creates a detached worktree at .vox/worktrees/<repo>/<slug>, lists it, removes it', async () => {
      const head = git(repo, ['rev-parse', 'HEAD']).trim();
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'feat-1' });
      assert.equal(wt.path, path.join(repo, '.vox', 'worktrees', 'app', 'feat-1'));
      assert.deepEqual([wt.family, wt.group, wt.slug, wt.head, wt.branch, wt.detached], ['repo', 'app', 'feat-1', head, null, true]);
      assert.equal(fs.readFileSync(path.join(wt.path, 'src/index.ts'), 'utf8'), 'export {};\n');

      const listed = await listManagedWorktrees(repo);
      assert.deepEqual(listed.map((w) => [w.path, w.head, w.detached, w.locked, w.prunable]), [[wt.path, head, true, false, false]]);

      const removed = await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      assert.deepEqual(removed, { path: wt.path, treeDeleted: true, linksUnlinked: 0 });
      assert.equal(fs.existsSync(wt.path), false);
      assert.equal(fs.existsSync(path.dirname(wt.path)), false, 'the empty group directory goes too');
      assert.deepEqual(await listManagedWorktrees(repo), []);
      assert.deepEqual(adminEntries(repo), []);
    });

    it('creates on a new branch from a base ref, and lists only managed worktrees', async () => {
      const first = git(repo, ['rev-parse', 'HEAD']).trim();
      writeFile(repo, 'b.txt', 'b\n');
      commitAll(repo, 'second');
      const userWt = path.join(sb.dir, 'user-wt');
      git(repo, ['worktree', 'add', '-q', '--detach', userWt, 'HEAD']);

      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'topic', baseRef: first, branch: 'vox/topic' });
      assert.equal(wt.branch, 'refs/heads/vox/topic');
      assert.equal(wt.detached, false);
      assert.equal(git(repo, ['rev-parse', 'vox/topic']).trim(), first);
      assert.equal(fs.existsSync(path.join(wt.path, 'b.txt')), false);
      assert.deepEqual((await listManagedWorktrees(repo)).map((w) => w.path), [wt.path]);

      git(repo, ['branch', 'feature', first]);
      const onBranch = await createManagedWorktree({ repoRoot: repo, slug: 'on-feature', baseRef: 'feature', detach: false });
      assert.deepEqual([onBranch.branch, onBranch.head], ['refs/heads/feature', first]);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'not-branch', baseRef: first, detach: false }), 'worktree/invalidRef', WorktreeError);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'again', branch: 'vox/topic' }), 'worktree/alreadyExists', WorktreeError);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'bad-branch', branch: 'a b' }), 'worktree/invalidRef', WorktreeError);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'bad-ref', baseRef: 'no-such-ref' }), 'worktree/invalidRef', WorktreeError);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'opt-ref', baseRef: '--upload-pack=x' }), 'worktree/invalidRef', WorktreeError);
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'topic', branch: 'other' }), 'worktree/alreadyExists', WorktreeError);
    });

    it('creates pool (variant) worktrees under .vox/worktrees/muse/<thread>/variant-<i>', async () => {
      const loc = variantLocation('thr_01J/ABC def', 2);
      assert.deepEqual(loc, { family: 'pool', group: 'thr_01J-ABC-def', slug: 'variant-2' });
      const wt = await createManagedWorktree({ repoRoot: repo, ...loc });
      assert.equal(wt.path, path.join(repo, '.vox', 'worktrees', 'muse', 'thr_01J-ABC-def', 'variant-2'));
      assert.equal(wt.family, 'pool');
      const other = await createManagedWorktree({ repoRoot: repo, ...variantLocation('thread-2', 2) });
      assert.deepEqual((await listManagedWorktrees(repo)).map((w) => [w.family, w.group, w.slug]), [
        ['pool', 'thr_01J-ABC-def', 'variant-2'],
        ['pool', 'thread-2', 'variant-2'],
      ]);
      await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      await removeManagedWorktree({ repoRoot: repo, path: other.path });
      assert.deepEqual(adminEntries(repo), []);
    });

    it('gives typed errors for a repository without commits and for a non-repository', async () => {
      const empty = makeRepo(sb, 'empty', { commit: false });
      const e = await assertRejectsCode(createManagedWorktree({ repoRoot: empty, slug: 's' }), 'worktree/noCommits', WorktreeError);
      assert.match(e.message, /no commits/);
      assert.equal(fs.existsSync(path.join(empty, '.vox')), false);
      const plain = path.join(sb.dir, 'plain');
      fs.mkdirSync(plain);
      await assertRejectsCode(createManagedWorktree({ repoRoot: plain, slug: 's' }), 'worktree/notARepository', WorktreeError);
      await assertRejectsCode(listManagedWorktrees(path.join(sb.dir, 'missing')), 'worktree/notARepository', WorktreeError);
    });

    it('refuses to create over an existing path', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'dup' });
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'dup' }), 'worktree/alreadyExists', WorktreeError);
      assert.ok(fs.existsSync(path.join(wt.path, 'README.md')));
    });
  });

  describe('info/exclude', () => {
    const excludeFile = () => path.join(repo, '.git', 'info', 'exclude');
    /** What `git init` puts there, then the bare `.vox/` line the earlier Vox appended. */
    const GIT_TEMPLATE = '# git ls-files --others --exclude-from=.git/info/exclude\n# Lines that start with \'#\' are comments.\n';
    const teamFiles = () => {
      writeFile(repo, '.vox/rules/team.md', 'be kind\n');
      writeFile(repo, '.vox/permissions.json', '{}\n');
    };
    const untracked = () => git(repo, ['status', '--porcelain', '--untracked-files=all']).split('\n').filter(Boolean).sort();

    it('adds only .vox/worktrees/ under its marker, once after two creates; the team\'s .vox/ files show in git status', async () => {
      fs.rmSync(path.join(repo, '.git', 'info'), { recursive: true, force: true });
      await createManagedWorktree({ repoRoot: repo, slug: 'one' });
      await createManagedWorktree({ repoRoot: repo, slug: 'two' });
      assert.deepEqual(excludeLines(repo), [VOX_EXCLUDE_MARKER, '.vox/worktrees/', '']);
      assert.equal(VOX_EXCLUDE_LINE, '.vox/worktrees/');
      teamFiles();
      assert.deepEqual(untracked(), ['?? .vox/permissions.json', '?? .vox/rules/team.md']);
    });

    it('keeps existing content and adds a newline before its lines when the file lacks one', async () => {
      fs.writeFileSync(excludeFile(), '# mine\n*.log');
      await createManagedWorktree({ repoRoot: repo, slug: 'one' });
      await createManagedWorktree({ repoRoot: repo, slug: 'two' });
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), `# mine\n*.log\n${VOX_EXCLUDE_MARKER}\n.vox/worktrees/\n`);
    });

    it('recognises an equivalent line already there', async () => {
      fs.writeFileSync(excludeFile(), '/.vox/worktrees/\n');
      await createManagedWorktree({ repoRoot: repo, slug: 'one' });
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), '/.vox/worktrees/\n');
    });

    it('migrates the bare .vox/ line the earlier Vox wrote (it made .vox/worktrees/ here) to .vox/worktrees/, byte-exact otherwise', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'old' });
      await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      fs.writeFileSync(excludeFile(), `${GIT_TEMPLATE}*.log\r\n.vox/\n# after\n`);
      teamFiles();
      assert.deepEqual(untracked(), [], 'the old line hides the team files');
      assert.equal(await migrateVoxExclude(repo), true);
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), `${GIT_TEMPLATE}*.log\r\n${VOX_EXCLUDE_MARKER}\n.vox/worktrees/\n# after\n`);
      assert.deepEqual(untracked(), ['?? .vox/permissions.json', '?? .vox/rules/team.md']);
      assert.equal(await migrateVoxExclude(repo), false, 'once');
      await createManagedWorktree({ repoRoot: repo, slug: 'new' });
      assert.equal(excludeLines(repo).filter((l) => l.startsWith('.vox')).length, 1);
    });

    it("keeps a .vox/ line Vox cannot have written: no managed worktree was ever made here, or an equivalent line came first, or its marker is there", async () => {
      fs.writeFileSync(excludeFile(), '.vox/\n');
      assert.equal(await migrateVoxExclude(repo), false);
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), '.vox/\n');
      await createManagedWorktree({ repoRoot: repo, slug: 'one' });
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), `.vox/\n${VOX_EXCLUDE_MARKER}\n.vox/worktrees/\n`, "the user's line stays; Vox's own follows");
      assert.equal(await migrateVoxExclude(repo), false, 'the marker says the migration is past');

      fs.writeFileSync(excludeFile(), '/.vox\n.vox/\n');
      assert.equal(await migrateVoxExclude(repo), false);
      assert.equal(fs.readFileSync(excludeFile(), 'utf8'), '/.vox\n.vox/\n');
    });

    it('migrates when an engine opens the workspace', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'old' });
      await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      fs.writeFileSync(excludeFile(), '.vox/\n');
      const engine = startTestEngine({ dir: sb.dir, workspaceRoot: repo });
      try {
        await waitFor('the migrated exclude file', 10_000, () => fs.readFileSync(excludeFile(), 'utf8') === `${VOX_EXCLUDE_MARKER}\n.vox/worktrees/\n`);
      } finally {
        await engine.dispose();
      }
    });
  });

  describe('.env provisioning', () => {
    beforeEach(() => {
      writeFile(repo, '.gitignore', '.env\n.env.production*\napi/.env.local\nnode_modules/\nconfig/.env.test\nsecrets/\n');
      commitAll(repo, 'ignore env');
      writeFile(repo, '.env', 'ROOT=1\n');
      writeFile(repo, 'api/.env.local', 'API=local\n');
      writeFile(repo, '.env.production', 'PROD=1\n');
      writeFile(repo, '.env.production.local', 'PROD_LOCAL=1\n');
      writeFile(repo, 'web/.env.development', 'WEB=dev\n'); // untracked, NOT ignored
      writeFile(repo, '.envrc', 'not a dotenv file\n');
      writeFile(repo, 'node_modules/pkg/.env', 'DEP=1\n');
      fs.chmodSync(path.join(repo, '.env'), 0o600);
    });

    it('copies untracked .env files (nested paths kept), skipping production unless opted in', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'env' });
      assert.deepEqual(wt.env?.copied, ['.env', 'api/.env.local', 'web/.env.development']);
      assert.deepEqual(
        wt.env?.skipped.map((s) => [s.path, s.reason]),
        [
          ['.env.production', 'production'],
          ['.env.production.local', 'production'],
          ['node_modules/pkg/.env', 'excludedDirectory'],
        ],
      );
      assert.equal(fs.readFileSync(path.join(wt.path, 'api/.env.local'), 'utf8'), 'API=local\n');
      assert.equal(fs.statSync(path.join(wt.path, '.env')).mode & 0o777, 0o600);
      assert.equal(fs.existsSync(path.join(wt.path, '.envrc')), false);
      assert.equal(fs.existsSync(path.join(wt.path, '.env.production')), false);
      // Provisioned .env files do not make the worktree dirty (ignored, or unchanged copies)…
      fs.appendFileSync(path.join(wt.path, 'api/.env.local'), 'EDITED=1\n'); // ignored: never counts
      const dirtyFree = await createManagedWorktree({ repoRoot: repo, slug: 'env-clean' });
      await removeManagedWorktree({ repoRoot: repo, path: dirtyFree.path });
      // …but an untracked, non-ignored one that was edited is the user's work.
      fs.appendFileSync(path.join(wt.path, 'web/.env.development'), 'EDITED=1\n');
      const dirty = await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: wt.path }), 'worktree/dirty', WorktreeError);
      assert.deepEqual(dirty.details.dirtyFiles, ['web/.env.development']);

      const prod = await createManagedWorktree({ repoRoot: repo, slug: 'env-prod', copyEnv: { includeProduction: true } });
      assert.deepEqual(prod.env?.copied, ['.env', '.env.production', '.env.production.local', 'api/.env.local', 'web/.env.development']);
      assert.equal(fs.readFileSync(path.join(prod.path, '.env.production'), 'utf8'), 'PROD=1\n');

      const none = await createManagedWorktree({ repoRoot: repo, slug: 'no-env', copyEnv: false });
      assert.equal(none.env, null);
      assert.equal(fs.existsSync(path.join(none.path, '.env')), false);
    });

    it('never overwrites a file the checkout already has', async () => {
      git(repo, ['checkout', '-q', '-b', 'other']);
      writeFile(repo, 'config/.env.test', 'FROM_COMMIT=1\n');
      git(repo, ['add', '-f', 'config/.env.test']);
      git(repo, ['commit', '-q', '-m', 'tracked env on other']);
      git(repo, ['checkout', '-q', 'main']);
      writeFile(repo, 'config/.env.test', 'FROM_WORKTREE=1\n'); // untracked (ignored) on main
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'keep', baseRef: 'other' });
      assert.deepEqual(wt.env?.skipped.find((s) => s.path === 'config/.env.test')?.reason, 'exists');
      assert.equal(fs.readFileSync(path.join(wt.path, 'config/.env.test'), 'utf8'), 'FROM_COMMIT=1\n');
    });

    it('does not follow symlinks in the source or in the target', async () => {
      const outside = path.join(sb.dir, 'outside');
      writeFile(outside, 'secret.env', 'OUTSIDE=1\n');
      fs.symlinkSync(path.join(outside, 'secret.env'), path.join(repo, '.env.linked'));
      writeFile(repo, '.gitignore', fs.readFileSync(path.join(repo, '.gitignore'), 'utf8') + '.env.linked\n');
      // On branch `other`, `secrets` is a committed symlink to a directory outside the repo; in the
      // user's tree it is a real directory holding an ignored .env.
      git(repo, ['checkout', '-q', '-b', 'other']);
      const outsideDir = path.join(sb.dir, 'outside-dir');
      fs.mkdirSync(outsideDir);
      fs.symlinkSync(outsideDir, path.join(repo, 'secrets'));
      git(repo, ['add', '-f', 'secrets', '.gitignore']);
      git(repo, ['commit', '-q', '-m', 'symlinked secrets']);
      git(repo, ['checkout', '-q', 'main']);
      writeFile(repo, 'secrets/.env', 'S=1\n');

      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'links', baseRef: 'other' });
      const reasons = Object.fromEntries(wt.env!.skipped.map((s) => [s.path, s.reason]));
      assert.equal(reasons['.env.linked'], 'symlink');
      assert.equal(reasons['secrets/.env'], 'symlink');
      assert.deepEqual(fs.readdirSync(outsideDir), [], 'nothing was written through the target symlink');
      assert.equal(fs.lstatSync(path.join(wt.path, 'secrets')).isSymbolicLink(), true);
      assert.equal(fs.existsSync(path.join(wt.path, '.env.linked')), false);
    });
  });

  describe('path validation', () => {
    it('accepts exactly two segments under a family root and returns the canonical path', () => {
      const p = path.join(repo, '.vox', 'worktrees', 'app', 'x');
      assert.deepEqual(validateManagedWorktreePath(repo, p), {
        family: 'repo', group: 'app', slug: 'x', path: p, repoRoot: repo, managedRoot: path.join(repo, '.vox', 'worktrees'),
      });
      const link = path.join(sb.dir, 'repo-link');
      fs.symlinkSync(repo, link);
      assert.equal(validateManagedWorktreePath(link, path.join(link, '.vox/worktrees/app/x')).path, p);
      assert.equal(validateManagedWorktreePath(repo, '.vox/worktrees/app/x').path, p, 'relative to the repository');
      assert.equal(validateManagedWorktreePath(repo, path.join(repo, '.vox/worktrees/muse/t1/variant-0')).family, 'pool');
    });

    it('refuses paths outside the root, with the wrong depth, filesystem roots and the repo itself', () => {
      const root = path.join(repo, '.vox', 'worktrees');
      const outside: string[] = [
        path.join(sb.dir, 'elsewhere', 'a', 'b'),
        path.join(repo, 'src', 'a'),
        path.join(root, 'a', 'b', 'c'), // three segments
        path.join(root, 'a'), // one segment
        root,
        path.join(root, 'muse', 'only-one'),
        path.join(root, 'muse', 'a', 'b', 'c'),
        path.parse(repo).root,
        repo,
        path.join(repo, '.vox'),
      ];
      for (const p of outside) assert.throws(() => validateManagedWorktreePath(repo, p), (e: unknown) => e instanceof WorktreeError && e.code === 'outsideManagedRoot', p);
    });

    it('refuses .., bad segments and NUL', () => {
      const root = path.join(repo, '.vox', 'worktrees');
      const bad = [
        `${root}/a/../b/c`,
        `${root}/a/b/..`,
        `${root}/a/-x`,
        `${root}/a/.hidden`,
        `${root}/a/b c`,
        `${root}/a/b\0`,
        `${root}/a/x.lock`,
        `${root}/a/${'x'.repeat(65)}`,
      ];
      for (const p of bad) assert.throws(() => validateManagedWorktreePath(repo, p), (e: unknown) => e instanceof WorktreeError && e.code === 'invalidSlug', JSON.stringify(p));
      assert.throws(() => managedWorktreePath(repo, { family: 'repo', group: 'app', slug: 'a/b' }), /path separator/);
      assert.throws(() => managedWorktreePath(repo, { family: 'repo', group: 'app', slug: '..' }), /relative path step/);
      assert.throws(() => managedWorktreePath(repo, { family: 'repo', group: 'app', slug: '' }), /empty/);
      assert.throws(() => managedWorktreePath(repo, { family: 'repo', group: 'muse', slug: 'x' }), /reserved/);
    });

    it('creating with a bad slug is refused before anything is written', async () => {
      for (const slug of ['..', 'a/b', '', '.x', 'a\0b', '-rf']) {
        await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug }), 'worktree/invalidSlug', WorktreeError);
      }
      assert.equal(fs.existsSync(path.join(repo, '.vox')), false);
    });

    it('refuses a symlinked .vox that escapes the repository (even a dangling one)', async () => {
      const elsewhere = path.join(sb.dir, 'elsewhere');
      fs.mkdirSync(path.join(elsewhere, 'worktrees', 'app', 'x'), { recursive: true });
      fs.symlinkSync(elsewhere, path.join(repo, '.vox'));
      assert.throws(() => validateManagedWorktreePath(repo, path.join(repo, '.vox/worktrees/app/x')), (e: unknown) => e instanceof WorktreeError && e.code === 'outsideManagedRoot');
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'y' }), 'worktree/outsideManagedRoot', WorktreeError);
      await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: path.join(repo, '.vox/worktrees/app/x') }), 'worktree/outsideManagedRoot', WorktreeError);
      assert.deepEqual(fs.readdirSync(path.join(elsewhere, 'worktrees', 'app')), ['x']);

      fs.unlinkSync(path.join(repo, '.vox'));
      fs.symlinkSync(path.join(sb.dir, 'does-not-exist'), path.join(repo, '.vox'));
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'y' }), 'worktree/outsideManagedRoot', WorktreeError);
      assert.equal(fs.existsSync(path.join(sb.dir, 'does-not-exist')), false);
    });

    it('refuses a symlinked group directory, even one pointing inside the managed root', async () => {
      const root = path.join(repo, '.vox', 'worktrees');
      fs.mkdirSync(path.join(root, 'real-group'), { recursive: true });
      fs.symlinkSync(path.join(root, 'real-group'), path.join(root, 'app'));
      assert.throws(() => validateManagedWorktreePath(repo, path.join(root, 'app', 'x')), (e: unknown) => e instanceof WorktreeError && e.code === 'outsideManagedRoot');
      await assertRejectsCode(createManagedWorktree({ repoRoot: repo, slug: 'x' }), 'worktree/outsideManagedRoot', WorktreeError);
      assert.deepEqual(fs.readdirSync(path.join(root, 'real-group')), []);
    });

    it('slugify and repoGroupName produce valid segments', () => {
      assert.equal(slugify('Fix: the ../../ bug!'), 'Fix-the-bug');
      assert.equal(slugify('...'), 'worktree');
      assert.equal(slugify('con'), 'con_');
      assert.equal(slugify('x'.repeat(100)).length, 64);
      const museRepo = makeRepo(sb, 'muse');
      assert.equal(repoGroupName(museRepo), 'muse-repo');
    });
  });

  describe('link-safe removal', () => {
    it('unlinks symlinks to outside files and directories without touching their targets', async () => {
      const outside = path.join(sb.dir, 'outside');
      writeFile(outside, 'file.txt', 'keep me\n');
      writeFile(outside, 'dir/inner.txt', 'inner\n');
      writeFile(outside, 'dir/deep/bin.dat', Buffer.from([0, 1, 2, 255, 254]));
      const before = snapshotFiles(outside);

      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'links' });
      fs.symlinkSync(path.join(outside, 'file.txt'), path.join(wt.path, 'link-file'));
      fs.symlinkSync(path.join(outside, 'dir'), path.join(wt.path, 'link-dir'));
      fs.mkdirSync(path.join(wt.path, 'sub', 'deeper'), { recursive: true });
      fs.symlinkSync(path.join(outside, 'dir'), path.join(wt.path, 'sub', 'deeper', 'link-dir-2'));
      fs.symlinkSync('../../../outside', path.join(wt.path, 'sub', 'relative-link'));
      fs.symlinkSync(path.join(sb.dir, 'nowhere'), path.join(wt.path, 'dangling'));
      writeFile(wt.path, 'ro/file.txt', 'read-only dir\n');
      fs.chmodSync(path.join(wt.path, 'ro'), 0o555);

      const dirty = await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: wt.path }), 'worktree/dirty', WorktreeError);
      assert.ok(dirty.details.dirtyFiles!.includes('link-file'));
      assert.ok(fs.existsSync(path.join(wt.path, 'link-file')), 'a refused removal deletes nothing');

      const res = await removeManagedWorktree({ repoRoot: repo, path: wt.path, force: true });
      assert.equal(res.linksUnlinked, 5);
      assert.equal(fs.existsSync(wt.path), false);
      assert.deepEqual(snapshotFiles(outside), before);
      assert.deepEqual(adminEntries(repo), []);
    });

    it('removeTreeNoFollow on a symlinked root removes only the link', async () => {
      const outside = path.join(sb.dir, 'outside');
      writeFile(outside, 'a.txt', 'a');
      const link = path.join(sb.dir, 'root-link');
      fs.symlinkSync(outside, link);
      await removeTreeNoFollow(link);
      assert.equal(fs.existsSync(link), false);
      assert.equal(fs.readFileSync(path.join(outside, 'a.txt'), 'utf8'), 'a');
    });

    it('refuses tracked changes unless forced, and reports them', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'dirty' });
      fs.appendFileSync(path.join(wt.path, 'README.md'), 'more\n');
      const e = await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: wt.path }), 'worktree/dirty', WorktreeError);
      assert.deepEqual(e.details.dirtyFiles, ['README.md']);
      assert.ok(fs.existsSync(wt.path));
      await removeManagedWorktree({ repoRoot: repo, path: wt.path, force: true });
      assert.equal(fs.existsSync(wt.path), false);
    });

    it('refuses a locked worktree with its reason, even with force', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'locked' });
      git(repo, ['worktree', 'lock', '--reason', 'x', wt.path]);
      assert.deepEqual((await listManagedWorktrees(repo)).map((w) => [w.locked, w.lockReason]), [[true, 'x']]);
      for (const force of [false, true]) {
        const e = await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: wt.path, force }), 'worktree/locked', WorktreeError);
        assert.equal(e.details.lockReason, 'x');
      }
      assert.ok(fs.existsSync(path.join(wt.path, 'README.md')));
      git(repo, ['worktree', 'unlock', wt.path]);
      await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      assert.equal(fs.existsSync(wt.path), false);
    });

    it('refuses a plain directory, a separate clone, a copy, and another repo\'s worktree: notLinked, left intact', async () => {
      const root = path.join(repo, '.vox', 'worktrees', 'app');
      await createManagedWorktree({ repoRoot: repo, slug: 'real' });

      const plain = path.join(root, 'plain');
      writeFile(plain, 'data.txt', 'mine\n');

      const clone = path.join(root, 'clone');
      git(sb.dir, ['clone', '-q', repo, clone]);

      const copy = path.join(root, 'copy');
      fs.cpSync(path.join(root, 'real'), copy, { recursive: true });

      const other = makeRepo(sb, 'other');
      const otherWt = path.join(sb.dir, 'other-wt');
      git(other, ['worktree', 'add', '-q', '--detach', otherWt, 'HEAD']);
      const moved = path.join(root, 'moved');
      fs.renameSync(otherWt, moved);

      for (const p of [plain, clone, copy, moved]) {
        const before = snapshotFiles(p);
        await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: p, force: true }), 'worktree/notLinked', WorktreeError);
        assert.deepEqual(snapshotFiles(p), before, p);
      }
      assert.deepEqual(adminEntries(other), ['other-wt'], "the other repository's admin entry is untouched");
      assert.deepEqual((await listManagedWorktrees(repo)).map((w) => w.slug), ['real']);
      await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: path.join(root, 'never-existed') }), 'worktree/notLinked', WorktreeError);
    });

    it('drops only its own admin entry: a user worktree whose directory is missing survives', async () => {
      const userWt = path.join(sb.dir, 'usb-drive-wt');
      git(repo, ['worktree', 'add', '-q', '--detach', userWt, 'HEAD']);
      fs.renameSync(userWt, `${userWt}-unmounted`);
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'mine' });
      await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      assert.deepEqual(adminEntries(repo), ['usb-drive-wt']);
    });

    it('cleans up git\'s admin entry when the tree was already deleted by hand', async () => {
      const wt = await createManagedWorktree({ repoRoot: repo, slug: 'gone' });
      fs.rmSync(wt.path, { recursive: true });
      assert.equal((await listManagedWorktrees(repo))[0]?.prunable, true);
      const res = await removeManagedWorktree({ repoRoot: repo, path: wt.path });
      assert.equal(res.treeDeleted, false);
      assert.deepEqual(adminEntries(repo), []);
    });
  });

  describe('concurrency', () => {
    it('create and remove racing on the same path are serialised (each sees the other complete or not at all)', async () => {
      const p = managedWorktreePath(repo, { family: 'repo', group: 'app', slug: 'race' });
      for (let round = 0; round < 3; round++) {
        const existedBefore = fs.existsSync(p);
        const [created, removed] = await Promise.allSettled([
          createManagedWorktree({ repoRoot: repo, slug: 'race' }),
          removeManagedWorktree({ repoRoot: repo, path: p }),
        ]);
        // Which one takes the lease first is not fixed (each resolves the repository first), but
        // the result must be one of the two serial orders, never a half-created/half-removed tree.
        if (!existedBefore && removed.status === 'rejected') {
          assert.equal((removed.reason as WorktreeError).code, 'notLinked'); // remove ran first…
          assert.match((removed.reason as Error).message, /there is no worktree at/); // …and saw nothing at all
          assert.equal(created.status, 'fulfilled');
          assert.ok(fs.existsSync(path.join(p, 'README.md')));
          assert.deepEqual(adminEntries(repo), ['race']);
        } else if (existedBefore && created.status === 'rejected') {
          assert.equal((created.reason as WorktreeError).code, 'alreadyExists'); // create ran first
          assert.equal(removed.status, 'fulfilled');
          assert.equal(fs.existsSync(p), false);
          assert.deepEqual(adminEntries(repo), []);
        } else {
          assert.equal(created.status, 'fulfilled', String((created as PromiseRejectedResult).reason));
          assert.equal(removed.status, 'fulfilled', String((removed as PromiseRejectedResult).reason));
          if (removed.status === 'fulfilled') assert.equal(removed.value.treeDeleted, true, 'remove saw the complete worktree');
          assert.equal(fs.existsSync(p), existedBefore, 'remove-then-create leaves one, create-then-remove none');
          assert.deepEqual(adminEntries(repo), existedBefore ? ['race'] : []);
        }
        assert.deepEqual((await listManagedWorktrees(repo)).map((w) => w.slug), fs.existsSync(p) ? ['race'] : []);
      }
    });

    it('an operation waits while another holds the same path, but not for other paths', async () => {
      const a = managedWorktreePath(repo, { family: 'repo', group: 'app', slug: 'a' });
      let aDone = false;
      let pendingA: Promise<unknown> | undefined;
      await workspaceLeases.withWorkspaceLease(a, async () => {
        pendingA = createManagedWorktree({ repoRoot: repo, slug: 'a' }).then(() => (aDone = true));
        // A different path proceeds while `a` is held (a global lock would deadlock here).
        const b = await createManagedWorktree({ repoRoot: repo, slug: 'b' });
        assert.ok(fs.existsSync(b.path));
        await sleep(50);
        assert.equal(aDone, false);
        assert.equal(fs.existsSync(a), false, 'nothing of `a` was created while its lease was held');
      });
      await pendingA;
      assert.ok(fs.existsSync(path.join(a, 'README.md')));
    });

    it('parallel creates on different paths all succeed and add .vox/worktrees/ once; same path: one wins', async () => {
      const slugs = ['p1', 'p2', 'p3', 'p4'];
      const made = await Promise.all(slugs.map((slug) => createManagedWorktree({ repoRoot: repo, slug })));
      assert.deepEqual(made.map((w) => w.slug), slugs);
      assert.equal(excludeLines(repo).filter((l) => l === '.vox/worktrees/').length, 1);
      const results = await Promise.allSettled([1, 2, 3].map(() => createManagedWorktree({ repoRoot: repo, slug: 'same' })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as WorktreeError).code, 'alreadyExists');
      await Promise.all(made.map((w) => removeManagedWorktree({ repoRoot: repo, path: w.path })));
      assert.deepEqual(adminEntries(repo), ['same']);
    });
  });

  it("never changes the user's HEAD, branch, index or stash", async () => {
    writeFile(repo, '.gitignore', '.env\n');
    commitAll(repo, 'gitignore');
    writeFile(repo, 'stashed.txt', 'stash me\n');
    git(repo, ['add', 'stashed.txt']);
    git(repo, ['stash', 'push', '-q', '-m', 'user stash']);
    writeFile(repo, 'staged.txt', 'staged\n');
    git(repo, ['add', 'staged.txt']);
    fs.appendFileSync(path.join(repo, 'README.md'), 'unstaged edit\n');
    writeFile(repo, 'untracked.txt', 'u\n');
    writeFile(repo, '.env', 'A=1\n');
    const before = userState(repo);

    const wt = await createManagedWorktree({ repoRoot: repo, slug: 'state', branch: 'vox/state' });
    const det = await createManagedWorktree({ repoRoot: repo, slug: 'state-2' });
    await listManagedWorktrees(repo);
    fs.appendFileSync(path.join(wt.path, 'README.md'), 'edit in worktree\n');
    await assertRejectsCode(removeManagedWorktree({ repoRoot: repo, path: wt.path }), 'worktree/dirty', WorktreeError);
    await removeManagedWorktree({ repoRoot: repo, path: wt.path, force: true });
    await removeManagedWorktree({ repoRoot: repo, path: det.path });

    const after = userState(repo);
    const { branches: branchesAfter, ...restAfter } = after;
    const { branches: branchesBefore, ...restBefore } = before;
    assert.deepEqual(restAfter, restBefore);
    assert.equal(branchesAfter, branchesBefore + git(repo, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/vox/state']), 'only the requested branch was added');
  });
});
