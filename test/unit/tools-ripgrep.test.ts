/**
 * Tests for ripgrep in the search and listing tools: finding a binary (VS Code's bundled one under
 * its app root, or rg on PATH), .gitignore-aware `list_files` and `search_text` when a binary is
 * given (and the plain walk when none is), regular expressions in ripgrep's linear-time engine,
 * and patterns ripgrep refuses falling back to JavaScript. Uses Debian's /usr/bin/rg, which
 * scripts/setup-code-server.sh installs; the tests that need it say so when it is missing.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { findRipgrep, ripgrepInAppRoot, ripgrepOnPath } from '../../src/engine/tools/ripgrep';
import type { ToolContext, ToolResult } from '../../src/engine/tools/types';
import { git } from '../support/git';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const tools = builtinToolRegistry();
const RG = ripgrepOnPath();

async function call(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const tool = tools.lookup(name);
  return tool.run(tool.parseArgs(JSON.stringify(args)), ctx);
}

function executable(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\n');
  fs.chmodSync(file, 0o755);
}

describe('ripgrep', () => {
  let base: string;
  beforeEach(() => {
    base = fs.realpathSync(makeTmpDir('vox-rg-'));
  });
  afterEach(() => removeTmpDir(base));

  describe('finding a binary', () => {
    it("finds VS Code's bundled rg under its app root, in either layout", () => {
      const plain = path.join(base, 'app1');
      executable(path.join(plain, 'node_modules/@vscode/ripgrep/bin/rg'));
      assert.equal(ripgrepInAppRoot(plain, 'linux'), path.join(plain, 'node_modules/@vscode/ripgrep/bin/rg'));
      const asar = path.join(base, 'app2');
      executable(path.join(asar, 'node_modules.asar.unpacked/@vscode/ripgrep/bin/rg'));
      assert.equal(ripgrepInAppRoot(asar, 'linux'), path.join(asar, 'node_modules.asar.unpacked/@vscode/ripgrep/bin/rg'));
      const win = path.join(base, 'app3');
      executable(path.join(win, 'node_modules/@vscode/ripgrep/bin/rg.exe'));
      assert.equal(ripgrepInAppRoot(win, 'win32'), path.join(win, 'node_modules/@vscode/ripgrep/bin/rg.exe'));
      assert.equal(ripgrepInAppRoot(win, 'linux'), undefined);
      assert.equal(ripgrepInAppRoot(path.join(base, 'missing'), 'linux'), undefined);
    });

    it('finds the first executable rg on PATH, skipping directories and non-executable files', () => {
      const [a, b, c] = ['a', 'b', 'c'].map((d) => path.join(base, d));
      fs.mkdirSync(path.join(a!, 'rg'), { recursive: true });
      fs.mkdirSync(b!);
      fs.writeFileSync(path.join(b!, 'rg'), 'not executable');
      fs.chmodSync(path.join(b!, 'rg'), 0o644);
      executable(path.join(c!, 'rg'));
      assert.equal(ripgrepOnPath({ PATH: [a, b, c].join(path.delimiter) }, 'linux'), path.join(c!, 'rg'));
      assert.equal(ripgrepOnPath({ PATH: '' }, 'linux'), undefined);
      assert.equal(ripgrepOnPath({}, 'linux'), undefined);
    });

    it('prefers the app root over PATH', () => {
      const app = path.join(base, 'app');
      executable(path.join(app, 'node_modules/@vscode/ripgrep/bin/rg'));
      executable(path.join(base, 'bin/rg'));
      const env = { PATH: path.join(base, 'bin') };
      assert.equal(findRipgrep({ appRoot: app, env }), path.join(app, 'node_modules/@vscode/ripgrep/bin/rg'));
      assert.equal(findRipgrep({ appRoot: path.join(base, 'nothing'), env }), path.join(base, 'bin/rg'));
      assert.equal(findRipgrep({ env: {} }), undefined);
    });

    it('finds the rg this machine has (Debian ripgrep, installed by scripts/setup-code-server.sh)', () => {
      assert.ok(RG, 'no rg on PATH: install Debian ripgrep (scripts/setup-code-server.sh does)');
    });
  });

  describe('in the tools', () => {
    let root: string;
    let withRg: ToolContext;
    let without: ToolContext;
    const write = (rel: string, data: string): void => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), data);
    };

    beforeEach(function () {
      if (!RG) this.skip();
      root = path.join(base, 'ws');
      fs.mkdirSync(root);
      git(root, ['init', '-q']);
      write('.gitignore', 'dist/\n*.log\n');
      write('src/a.ts', 'const needle = 1;\n');
      write('dist/out.js', 'needle();\n');
      write('debug.log', 'needle in a log\n');
      write('logs/x.log', 'needle\n');
      write('.github/ci.yml', 'needle: yes\n');
      write('node_modules/x/i.js', 'needle\n');
      fs.mkdirSync(path.join(root, 'emptydir'));
      withRg = { workspaceRoot: root, signal: new AbortController().signal, ripgrepPath: RG! };
      without = { workspaceRoot: root, signal: new AbortController().signal };
    });

    it('list_files leaves out what .gitignore ignores, and .git and node_modules', async () => {
      assert.equal(
        (await call('list_files', { recursive: true }, withRg)).content,
        '.github/\n.github/ci.yml\n.gitignore\nemptydir/\nsrc/\nsrc/a.ts',
      );
      assert.equal((await call('list_files', {}, withRg)).content, '.github/\n.gitignore\nemptydir/\nsrc/');
      // Without ripgrep the walk shows everything but .git and node_modules.
      assert.equal(
        (await call('list_files', {}, without)).content,
        '.github/\n.gitignore\ndebug.log\ndist/\nemptydir/\nlogs/\nsrc/',
      );
    });

    it('list_files of an ignored directory named explicitly, and of one whose entries are all ignored', async () => {
      assert.equal((await call('list_files', { path: 'dist' }, withRg)).content, 'dist/out.js');
      assert.equal((await call('list_files', { path: 'logs' }, withRg)).content, '(every entry of logs is ignored by .gitignore)');
      assert.equal((await call('list_files', { path: 'emptydir' }, withRg)).content, '(emptydir is empty)');
    });

    it('search_text leaves out ignored files, but searches an ignored file named explicitly', async () => {
      assert.equal((await call('search_text', { query: 'needle' }, withRg)).content, '.github/ci.yml:1: needle: yes\nsrc/a.ts:1: const needle = 1;');
      assert.equal((await call('search_text', { query: 'needle', path: 'debug.log' }, withRg)).content, 'debug.log:1: needle in a log');
      assert.equal(
        (await call('search_text', { query: 'needle' }, without)).content,
        '.github/ci.yml:1: needle: yes\ndebug.log:1: needle in a log\ndist/out.js:1: needle();\nlogs/x.log:1: needle\nsrc/a.ts:1: const needle = 1;',
      );
    });

    it('runs regular expressions in ripgrep, and those it refuses (look-around) in JavaScript', async () => {
      assert.equal((await call('search_text', { query: 'const \\w+ = \\d;$', regex: true }, withRg)).content, 'src/a.ts:1: const needle = 1;');
      assert.equal((await call('search_text', { query: '(?<=const )needle', regex: true }, withRg)).content, 'src/a.ts:1: const needle = 1;');
      assert.equal((await call('search_text', { query: 'NEEDLE', regex: true, caseSensitive: true }, withRg)).content, 'No matches for "NEEDLE" in ..');
    });

    it('falls back to the plain walk when the binary cannot run, and says so', async () => {
      const broken = { ...withRg, ripgrepPath: path.join(base, 'no-such-rg') };
      const r = await call('list_files', {}, broken);
      assert.match(r.content, /^\.github\/\n\.gitignore\ndebug\.log\ndist\/\nemptydir\/\nlogs\/\nsrc\/\n\[list_files: ripgrep could not run .*\.gitignore was not applied\]$/);
      const s = await call('search_text', { query: 'needle', path: 'dist' }, broken);
      assert.match(s.content, /^dist\/out\.js:1: needle\(\);\n\[search_text: ripgrep could not run .*\.gitignore was not applied\]$/);
    });
  });
});
