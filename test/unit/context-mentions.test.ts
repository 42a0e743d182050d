/**
 * @-mentions in the engine (src/engine/context/): fuzzy ranking, suggestions (.gitignore-aware
 * through the real ripgrep, specials, commits, threads), and resolution with its limits — real
 * files, a real git repository, a real SQLite store; every file that cannot be attached (missing,
 * binary, a symlink out of the workspace, a FIFO) is a visible warning, never a silent miss.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fuzzyScore, rankFuzzy } from '../../src/engine/context/fuzzy';
import { MENTIONS_TOTAL_MAX_CHARS, MENTION_MAX_CHARS, resolveMentions, type ResolveDeps } from '../../src/engine/context/resolve';
import { suggestMentions } from '../../src/engine/context/suggest';
import { WorkspaceFiles } from '../../src/engine/context/workspace-files';
import { approximateTokens } from '../../src/engine/providers/token-count';
import { VoxStore } from '../../src/engine/store/store';
import { findRipgrep } from '../../src/engine/tools/ripgrep';
import { formatContext, splitContext } from '../../src/protocol/mentions';
import { initRepo } from '../support/git-fixtures';
import { git } from '../support/git';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('context: fuzzy ranking', () => {
  it('needs the query in order; prefers file-name substrings, segment starts and short paths', () => {
    assert.equal(fuzzyScore('xyz', 'src/app.ts'), null);
    assert.equal(fuzzyScore('', 'anything'), 0);
    const files = ['src/components/Composer.svelte', 'src/compose/index.ts', 'docs/COMPOSING.md', 'test/webview/composer-tests/a.ts', 'src/core/mpose.ts'];
    // The file name beats a directory name; paths without every letter in order do not match.
    assert.deepEqual(rankFuzzy('composer', files, (f) => f, 5), ['src/components/Composer.svelte', 'test/webview/composer-tests/a.ts']);
    // A query that names a whole directory finds its files.
    assert.equal(rankFuzzy('compose/', files, (f) => f, 1)[0], 'src/compose/index.ts');
    assert.ok((fuzzyScore('composer', 'src/components/Composer.svelte') ?? 0) > (fuzzyScore('composer', 'test/webview/composer-tests/a.ts') ?? 0));
    // Initials of path segments match: "ctc" → context/token-count.
    assert.equal(rankFuzzy('tc', ['src/engine/providers/token-count.ts', 'src/engine/tools/text.ts', 'README.md'], (f) => f, 1)[0], 'src/engine/providers/token-count.ts');
    // A file name match beats the same letters spread over directories.
    assert.equal(rankFuzzy('run', ['src/engine/runs/registry.ts', 'src/engine/agent/runner.ts'], (f) => f, 1)[0], 'src/engine/agent/runner.ts');
  });
});

describe('context: @-mention suggestions and resolution', function () {
  this.timeout(30_000);
  let dir: string;
  let store: VoxStore;
  let dbDir: string;
  const rg = findRipgrep();

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
    initRepo(dir, { 'src/app.ts': 'export const app = 1;\n', 'src/util/strings.ts': 'export const s = "x";\n', '.gitignore': 'build/\n*.log\n', 'README.md': '# demo\n' });
    fs.mkdirSync(path.join(dir, 'build'));
    fs.writeFileSync(path.join(dir, 'build', 'app.js'), 'ignored');
    fs.writeFileSync(path.join(dir, 'debug.log'), 'ignored');
    dbDir = makeTmpDir();
    store = VoxStore.open(path.join(dbDir, 'vox.db'));
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
    removeTmpDir(dbDir);
  });

  const deps = (extra: Partial<ResolveDeps> = {}): ResolveDeps => ({
    workspaceRoot: dir, files: new WorkspaceFiles(dir, rg), store, sources: undefined, count: async (t) => approximateTokens(t), ...extra,
  });

  it('suggests workspace files and folders, .gitignore-aware, best match first', async function () {
    if (!rg) this.skip();
    const items = await suggestMentions({ files: new WorkspaceFiles(dir, rg), store, workspaceRoot: dir }, 'app', 20);
    assert.equal(items[0]?.label, 'src/app.ts');
    assert.equal(items[0]?.kind, 'file');
    assert.ok(!items.some((i) => i.label.startsWith('build')), 'ignored build/app.js is not offered');
    const all = await suggestMentions({ files: new WorkspaceFiles(dir, rg), store, workspaceRoot: dir }, '', 50);
    assert.ok(all.some((i) => i.kind === 'folder' && i.target === 'src/util'));
    assert.ok(!all.some((i) => i.label === 'debug.log'));
    assert.deepEqual(all.slice(0, 4).map((i) => i.kind).sort(), ['git', 'problems', 'selection', 'terminal']);
  });

  it('suggests @problems for "pro", commits for "git:", and past threads by title', async () => {
    const files = new WorkspaceFiles(dir, rg);
    assert.equal((await suggestMentions({ files, store, workspaceRoot: dir }, 'pro'))[0]?.kind, 'problems');
    const sha = git(dir, ['rev-parse', '--short', 'HEAD']).trim();
    const commits = await suggestMentions({ files, store, workspaceRoot: dir }, 'git:');
    assert.equal(commits[0]?.target, sha);
    store.append({ type: 'thread.created', threadId: 'thread:refactor', title: 'Refactor the parser' });
    const threads = await suggestMentions({ files, store, workspaceRoot: dir }, 'parser');
    assert.deepEqual(threads.filter((t) => t.kind === 'thread').map((t) => t.target), ['thread:refactor']);
  });

  it('attaches a file, and a missing file is a visible warning in the chip and the message', async () => {
    const r = await resolveMentions(deps(), [{ kind: 'file', target: 'src/app.ts' }, { kind: 'file', target: 'src/nope.ts' }]);
    assert.equal(r[0]!.chip.status, 'ok');
    assert.equal(r[0]!.text, 'export const app = 1;\n');
    assert.equal(r[0]!.chip.tokens, approximateTokens('export const app = 1;\n'));
    assert.deepEqual({ status: r[1]!.chip.status, warning: r[1]!.chip.warning, tokens: r[1]!.chip.tokens }, { status: 'warning', warning: 'File not found: src/nope.ts', tokens: 0 });
    const message = formatContext('explain these', r);
    assert.match(message, /\[not attached: File not found: src\/nope\.ts\]/);
    assert.match(message, /export const app = 1;/);
    const back = splitContext(message);
    assert.equal(back.prompt, 'explain these');
    assert.deepEqual(back.chips, r.map((x) => x.chip));
  });

  it('refuses binary files, symlinks out of the workspace and FIFOs with warnings; cuts huge files to the limit', async () => {
    fs.writeFileSync(path.join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    const outside = makeTmpDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    fs.writeFileSync(path.join(dir, 'huge.txt'), 'a'.repeat(MENTION_MAX_CHARS * 3));
    try {
      const r = await resolveMentions(deps(), [
        { kind: 'file', target: 'logo.png' }, { kind: 'file', target: 'link.txt' }, { kind: 'file', target: 'pipe' }, { kind: 'file', target: 'huge.txt' }, { kind: 'file', target: '../etc/passwd' },
      ]);
      assert.equal(r[0]!.chip.status, 'warning');
      assert.match(r[0]!.chip.warning!, /binary file/);
      assert.equal(r[1]!.chip.status, 'warning');
      assert.match(r[1]!.chip.warning!, /outside the workspace|leads out|symlink/i);
      assert.equal(r[2]!.chip.status, 'warning');
      assert.match(r[2]!.chip.warning!, /FIFO|named pipe|special/i);
      assert.equal(r[3]!.chip.status, 'truncated');
      assert.ok(r[3]!.text.length < MENTION_MAX_CHARS + 200);
      assert.match(r[3]!.text, /more characters not attached/);
      assert.equal(r[4]!.chip.status, 'warning');
      assert.ok(!r.some((x) => x.text.includes('outside')));
    } finally {
      removeTmpDir(outside);
    }
  });

  it('a folder lists its files with .gitignore applied; the total limit cuts later mentions and says so', async function () {
    if (!rg) this.skip();
    const r = await resolveMentions(deps(), [{ kind: 'folder', target: 'src' }, { kind: 'folder', target: 'build' }, { kind: 'folder', target: 'nowhere' }]);
    assert.equal(r[0]!.text, 'Files in src/ (2, .gitignore applied):\nsrc/app.ts\nsrc/util/strings.ts');
    assert.match(r[1]!.chip.warning!, /no files that are not ignored/);
    assert.equal(r[2]!.chip.warning, 'Folder not found: nowhere');
    // Each under the per-mention limit; together over the total: the 5th is cut, the 6th not attached.
    const each = MENTION_MAX_CHARS - 5_000;
    for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(dir, `big${i}.txt`), 'b'.repeat(each));
    const big = await resolveMentions(deps(), [0, 1, 2, 3, 4, 5].map((i) => ({ kind: 'file' as const, target: `big${i}.txt` })));
    const attached = big.reduce((n, x) => n + x.text.length, 0);
    assert.ok(attached <= MENTIONS_TOTAL_MAX_CHARS + 200, `${attached} characters attached`);
    assert.deepEqual(big.map((b) => b.chip.status), ['ok', 'ok', 'ok', 'ok', 'truncated', 'warning']);
    assert.match(big[4]!.text, /cut: the prompt's mentions are limited/);
    assert.match(big[5]!.chip.warning!, /over their limit/);
  });

  it('@git attaches the working-tree diff (untracked files named) or a commit; a bad commit warns', async () => {
    fs.writeFileSync(path.join(dir, 'src/app.ts'), 'export const app = 2;\n');
    fs.writeFileSync(path.join(dir, 'new.txt'), 'new\n');
    const sha = git(dir, ['rev-parse', 'HEAD']).trim();
    const r = await resolveMentions(deps(), [{ kind: 'git' }, { kind: 'git', target: sha }, { kind: 'git', target: 'deadbeef' }, { kind: 'git', target: '--output=/tmp/x' }]);
    assert.match(r[0]!.text, /-export const app = 1;\n\+export const app = 2;/);
    assert.match(r[0]!.text, /Untracked files:\nnew\.txt/);
    assert.match(r[1]!.text, new RegExp(`^commit ${sha}`));
    assert.equal(r[2]!.chip.warning, 'No commit deadbeef in this repository');
    assert.equal(r[3]!.chip.warning, '"--output=/tmp/x" is not a commit name');
  });

  it('editor sources: attached when the host has them, a warning when it has none or nothing is there', async () => {
    const none = await resolveMentions(deps(), [{ kind: 'problems' }, { kind: 'terminal' }, { kind: 'selection' }]);
    assert.deepEqual(none.map((x) => x.chip.status), ['warning', 'warning', 'warning']);
    const sources = {
      problems: async () => 'src/app.ts:1:14 error ts 2322: Type "1" is not assignable',
      terminal: async () => ({ name: 'bash', text: '$ npm test\n\u001b[31mFAIL\u001b[0m app.test.ts\n' }),
      selection: async () => null,
    };
    const r = await resolveMentions(deps({ sources }), [{ kind: 'problems' }, { kind: 'terminal' }, { kind: 'selection' }]);
    assert.match(r[0]!.text, /error ts 2322/);
    assert.equal(r[1]!.chip.label, 'terminal: bash');
    assert.equal(r[1]!.text, 'Output of terminal "bash":\n$ npm test\nFAIL app.test.ts'); // escape sequences stripped
    assert.equal(r[2]!.chip.warning, 'Nothing is selected in the editor');
  });
});
