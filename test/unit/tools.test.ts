/**
 * Tests for the agent's built-in tools (src/engine/tools/*) on real temporary directories,
 * always going through the built-in registry → `parseArgs` → `run` as the agent loop does: happy
 * paths, bad input, every cap (list_files and search_text with the built-in walk and with ripgrep),
 * apply_edit's matching and line-ending rules, atomic writes, and run_command's streaming, timeouts,
 * process-group kill, output tail and cancellation.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { parseToolArgs, ARGS_PREVIEW_CHARS } from '../../src/engine/tools/schema';
import type { ToolRegistry } from '../../src/engine/tools/registry';
import { READ_FILE_MAX_BYTES } from '../../src/engine/tools/read-file';
import { TOOL_NOTICE_RESERVE_CHARS, TOOL_OUTPUT_BUDGET_CHARS, TOOL_RESULT_MAX_CHARS } from '../../src/engine/tools/text';
import { TOOL_RESULT_MAX_CHARS as LOOP_RESULT_MAX_CHARS } from '../../src/engine/agent/runner';
import { LIST_FILES_MAX_ENTRIES } from '../../src/engine/tools/list-files';
import { SEARCH_MAX_FILE_BYTES } from '../../src/engine/tools/search-text';
import { ripgrepOnPath } from '../../src/engine/tools/ripgrep';
import { RUN_COMMAND_OUTPUT_TAIL_CHARS, RUN_COMMAND_DRAIN_MS, safeTailStart } from '../../src/engine/tools/run-command';
import { ToolError, type ToolContext, type ToolResult } from '../../src/engine/tools/types';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';
import { assertRejectsCode } from '../support/assert-code';

const tools = builtinToolRegistry();
const rg = ripgrepOnPath();
/** The walking tools run both ways: the built-in walk, and ripgrep (when installed; tools-ripgrep.test.ts requires it). */
const WALK_MODES: Array<[string, Partial<ToolContext>]> = [['built-in walk', {}], ...(rg ? [['ripgrep', { ripgrepPath: rg }] as [string, Partial<ToolContext>]] : [])];
const lookupTool = (r: ToolRegistry, name: string) => r.lookup(name);
const toolSpecs = (r: ToolRegistry) => r.specs();

function ctxFor(root: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { workspaceRoot: root, signal: new AbortController().signal, ...extra };
}

async function call(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const tool = lookupTool(tools, name);
  return tool.run(tool.parseArgs(JSON.stringify(args)), ctx);
}

/** True once `pid` no longer runs (gone, or a zombie waiting for a reaper that is not us). */
function processGone(pid: number, withinMs = 1500): Promise<boolean> {
  const gone = (): boolean => {
    try {
      process.kill(pid, 0);
      return /\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return true;
    }
  };
  return waitFor(`process ${pid} to end`, withinMs, gone, 25).then(() => true, () => false);
}

describe('agent tools', () => {
  let root: string;
  let ctx: ToolContext;
  const write = (rel: string, data: string | Buffer): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), data);
  };
  const read = (rel: string): string => fs.readFileSync(path.join(root, rel), 'utf8');

  beforeEach(() => {
    root = fs.realpathSync(makeTmpDir('vox-tools-'));
    ctx = ctxFor(root);
  });
  afterEach(() => removeTmpDir(root));

  describe('registry and argument parsing', () => {
    it('offers the nine tools with their classes', () => {
      assert.deepEqual(toolSpecs(tools).map((s) => s.name), [
        'read_file', 'list_files', 'search_text', 'write_file', 'apply_edit', 'run_command', 'spawn_subagent', 'command_status', 'command_kill',
      ]);
      const classes = Object.fromEntries([...tools].map(([n, t]) => [n, `${t.toolClass}/${t.mutating}`]));
      assert.deepEqual(classes, {
        read_file: 'read/false', list_files: 'read/false', search_text: 'read/false',
        write_file: 'write/true', apply_edit: 'write/true', run_command: 'execute/true',
        // Subagents ask for approval of their own tool calls; starting, watching or stopping one changes nothing itself.
        spawn_subagent: 'read/false', command_status: 'read/false', command_kill: 'read/false',
      });
    });

    it('lookupTool names the available tools for an unknown one', async () => {
      await assertRejectsCode(() => lookupTool(tools, 'delete_everything'), 'tool/unknownTool', { type: ToolError, message: /delete_everything.*read_file, list_files/ });
    });

    it('invalid JSON gets the parse message and a truncated preview', async () => {
      const bad = `{"path": "a.ts", ${'x'.repeat(1000)}`;
      const e = await assertRejectsCode(() => lookupTool(tools, 'read_file').parseArgs(bad), 'tool/invalidArguments', { type: ToolError, message: /not valid JSON/ });
      assert.ok(e.message.includes(bad.slice(0, ARGS_PREVIEW_CHARS)));
      assert.ok(!e.message.includes(bad.slice(0, ARGS_PREVIEW_CHARS + 1)));
      assert.match(e.message, /1017 characters in all/);
    });

    it('refuses non-objects, missing fields, wrong types, bad numbers and unknown properties', async () => {
      const parse = (json: string): unknown => lookupTool(tools, 'read_file').parseArgs(json);
      await assertRejectsCode(() => parse('[1]'), 'tool/invalidArguments', { type: ToolError, message: /JSON object, got an array/ });
      await assertRejectsCode(() => parse('"a.ts"'), 'tool/invalidArguments', { type: ToolError, message: /JSON object, got a string/ });
      await assertRejectsCode(() => parse('{}'), 'tool/invalidArguments', { type: ToolError, message: /missing required property "path"/ });
      await assertRejectsCode(() => parse('{"path": 5}'), 'tool/invalidArguments', { type: ToolError, message: /"path" must be a string, got a number/ });
      await assertRejectsCode(() => parse('{"path": ""}'), 'tool/invalidArguments', { type: ToolError, message: /"path" must not be empty/ });
      await assertRejectsCode(() => parse('{"path": "a", "startLine": 1.5}'), 'tool/invalidArguments', { type: ToolError, message: /must be an integer, got a fractional/ });
      await assertRejectsCode(() => parse('{"path": "a", "startLine": 0}'), 'tool/invalidArguments', { type: ToolError, message: /at least 1/ });
      await assertRejectsCode(() => parse('{"path": "a", "startLine": 5, "endLine": 2}'), 'tool/invalidArguments', { type: ToolError, message: /before startLine/ });
      await assertRejectsCode(() => parse('{"path": "a", "encoding": "latin1"}'), 'tool/invalidArguments', { type: ToolError, message: /unknown property "encoding"/ });
    });

    it('the per-call output budget leaves room for notices under the agent loop\'s cut', () => {
      assert.equal(LOOP_RESULT_MAX_CHARS, TOOL_RESULT_MAX_CHARS, 'the agent loop cuts at the one output limit');
      assert.equal(TOOL_OUTPUT_BUDGET_CHARS + TOOL_NOTICE_RESERVE_CHARS, TOOL_RESULT_MAX_CHARS);
      assert.ok(TOOL_NOTICE_RESERVE_CHARS >= 1000, 'room for the notices tools write after their output');
      assert.ok(READ_FILE_MAX_BYTES <= TOOL_OUTPUT_BUDGET_CHARS && RUN_COMMAND_OUTPUT_TAIL_CHARS <= TOOL_OUTPUT_BUDGET_CHARS);
    });

    it('accepts null for optional fields and empty text as {}', () => {
      assert.deepEqual(lookupTool(tools, 'read_file').parseArgs('{"path": "a", "startLine": null}'), { path: 'a' });
      assert.deepEqual(lookupTool(tools, 'list_files').parseArgs('  '), {});
      assert.deepEqual(parseToolArgs('t', '{"n": 2}', { type: 'object', properties: { n: { type: 'number', description: '' } }, required: ['n'], additionalProperties: false }), { n: 2 });
    });
  });

  describe('read_file', () => {
    it('reads whole files and line ranges, showing CRLF as LF and dropping a BOM', async () => {
      write('a.txt', '\uFEFFone\r\ntwo\r\nthree\r\nfour');
      assert.equal((await call('read_file', { path: 'a.txt' }, ctx)).content, 'one\ntwo\nthree\nfour');
      assert.equal((await call('read_file', { path: 'a.txt', startLine: 2, endLine: 3 }, ctx)).content, 'two\nthree');
      assert.equal((await call('read_file', { path: 'a.txt', startLine: 4 }, ctx)).content, 'four');
      const past = await call('read_file', { path: 'a.txt', startLine: 9 }, ctx);
      assert.equal(past.isError, true);
      assert.match(past.content, /past the end .* \(4 lines\)/);
      write('empty.txt', '');
      assert.equal((await call('read_file', { path: 'empty.txt' }, ctx)).content, '[read_file: empty.txt is empty]');
      assert.match((await call('read_file', { path: 'a.txt', startLine: 3, endLine: 10 }, ctx)).content, /^three\nfour\n\[read_file: the file ends at line 4\.\]$/);
    });

    it('caps huge files and says where to continue', async () => {
      const lines = Array.from({ length: 60_000 }, (_, i) => `line-${String(i + 1).padStart(6, '0')}`);
      write('big.txt', lines.join('\n'));
      const first = await call('read_file', { path: 'big.txt' }, ctx);
      const body = first.content.slice(0, first.content.lastIndexOf('\n['));
      assert.ok(Buffer.byteLength(body) <= READ_FILE_MAX_BYTES);
      const next = Number(/startLine=(\d+)/.exec(first.content)?.[1]);
      assert.ok(next > 1000 && next < 60_000, `continuation line ${next}`);
      assert.ok(body.endsWith(lines[next - 2]!));
      const cont = await call('read_file', { path: 'big.txt', startLine: next, endLine: next + 1 }, ctx);
      assert.equal(cont.content, `${lines[next - 1]}\n${lines[next]}`);
      assert.equal((await call('read_file', { path: 'big.txt', startLine: 59_999 }, ctx)).content, `${lines[59_998]}\n${lines[59_999]}`);
    });

    it('cuts a single giant line at a character boundary', async () => {
      write('min.js', 'é'.repeat(READ_FILE_MAX_BYTES)); // 2 bytes per character
      const r = await call('read_file', { path: 'min.js' }, ctx);
      const body = r.content.slice(0, r.content.indexOf('\n['));
      assert.equal(body, 'é'.repeat(READ_FILE_MAX_BYTES / 2));
      assert.match(r.content, /line 1 is longer than \d+ bytes and was cut.*startLine=2/);
    });

    it('refuses binary and UTF-16 files, directories and missing files', async () => {
      write('img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
      write('u16.txt', Buffer.from('\uFEFFhi', 'utf16le'));
      const bin = await call('read_file', { path: 'img.png' }, ctx);
      assert.equal(bin.isError, true);
      assert.match(bin.content, /binary file \(it contains NUL bytes; 12 bytes\)/);
      assert.match((await call('read_file', { path: 'u16.txt' }, ctx)).content, /UTF-16/);
      fs.mkdirSync(path.join(root, 'dir'));
      assert.match((await call('read_file', { path: 'dir' }, ctx)).content, /is a directory; use list_files/);
      await assertRejectsCode(call('read_file', { path: 'nope.txt' }, ctx), 'tool/notFound', { type: ToolError, message: /nope\.txt/ });
      await assertRejectsCode(call('read_file', { path: '../etc/passwd' }, ctx), 'tool/pathEscape', ToolError);
    });
  });

  for (const [mode, extra] of WALK_MODES) {
    describe(`list_files (${mode})`, () => {
      beforeEach(() => {
        ctx = ctxFor(root, extra);
        write('b.txt', '');
        write('src/z.ts', '');
        write('src/a/deep.ts', '');
        write('node_modules/pkg/index.js', '');
        write('.git/HEAD', '');
        write('.github/ci.yml', '');
      });

      it('lists one level, marking directories and skipping .git and node_modules', async () => {
        assert.equal((await call('list_files', {}, ctx)).content, '.github/\nb.txt\nsrc/');
        assert.equal((await call('list_files', { path: 'src' }, ctx)).content, 'src/a/\nsrc/z.ts');
      });

      it('lists recursively, and an explicitly named skipped directory', async () => {
        assert.equal(
          (await call('list_files', { recursive: true }, ctx)).content,
          '.github/\n.github/ci.yml\nb.txt\nsrc/\nsrc/a/\nsrc/a/deep.ts\nsrc/z.ts',
        );
        assert.equal((await call('list_files', { path: 'node_modules', recursive: true }, ctx)).content, 'node_modules/pkg/\nnode_modules/pkg/index.js');
      });

      it('caps entries breadth-first and says so', async () => {
        const r = await call('list_files', { recursive: true, maxEntries: 4 }, ctx);
        const lines = r.content.split('\n');
        assert.deepEqual(lines.slice(0, 4), ['.github/', '.github/ci.yml', 'b.txt', 'src/']);
        assert.match(lines[4]!, new RegExp(`truncated at 4 entries.*up to ${LIST_FILES_MAX_ENTRIES}`));
        await assertRejectsCode(async () => lookupTool(tools, 'list_files').parseArgs(`{"maxEntries": ${LIST_FILES_MAX_ENTRIES + 1}}`), 'tool/invalidArguments', ToolError);
      });

      it('stops at the output budget however many entries were allowed', async () => {
        for (let i = 0; i < 400; i++) write(`many/${String(i).padStart(3, '0')}-${'n'.repeat(90)}.txt`, '');
        const r = await call('list_files', { path: 'many', maxEntries: 1000 }, ctx);
        assert.ok(r.content.length <= TOOL_OUTPUT_BUDGET_CHARS + 200, String(r.content.length));
        assert.match(r.content, /\[list_files: truncated at \d+ entries; list a subdirectory\]$/);
      });

      it('reports files, missing paths and escapes', async () => {
        assert.equal((await call('list_files', { path: 'b.txt' }, ctx)).isError, true);
        await assertRejectsCode(call('list_files', { path: 'missing' }, ctx), 'tool/notFound', ToolError);
        await assertRejectsCode(call('list_files', { path: '..' }, ctx), 'tool/pathEscape', ToolError);
        fs.mkdirSync(path.join(root, 'empty'));
        assert.equal((await call('list_files', { path: 'empty' }, ctx)).content, '(empty is empty)');
      });
    });

    describe(`search_text (${mode})`, () => {
      beforeEach(() => {
        ctx = ctxFor(root, extra);
        write('src/a.ts', 'const Alpha = 1;\nconst beta = 2;\r\n// alpha again\n');
        write('src/b.ts', 'export function alphabet() {}\n');
        write('node_modules/x/alpha.js', 'alpha');
        write('.git/alpha', 'alpha');
        write('img.bin', Buffer.concat([Buffer.from('alpha'), Buffer.from([0, 1, 2])]));
      });

      it('finds plain text case-insensitively by default, as path:line: text', async () => {
        assert.equal(
          (await call('search_text', { query: 'alpha' }, ctx)).content,
          'src/a.ts:1: const Alpha = 1;\nsrc/a.ts:3: // alpha again\nsrc/b.ts:1: export function alphabet() {}\n[search_text: skipped 1 binary files]',
        );
        assert.equal((await call('search_text', { query: 'Alpha', caseSensitive: true, path: 'src' }, ctx)).content, 'src/a.ts:1: const Alpha = 1;');
        assert.equal((await call('search_text', { query: 'beta', path: 'src/a.ts' }, ctx)).content, 'src/a.ts:2: const beta = 2;');
      });

      it('supports regular expressions and refuses invalid ones at parse time', async () => {
        assert.equal((await call('search_text', { query: '^const \\w+ = 2;$', regex: true, path: 'src' }, ctx)).content, 'src/a.ts:2: const beta = 2;');
        await assertRejectsCode(async () => lookupTool(tools, 'search_text').parseArgs('{"query": "(unclosed", "regex": true}'), 'tool/invalidArguments', { type: ToolError, message: /Invalid regular expression/ });
      });

      it('caps results, skips large files and reports no matches plainly', async () => {
        write('many.txt', Array.from({ length: 50 }, (_, i) => `hit ${i}`).join('\n'));
        write('huge.txt', `hit\n${'x'.repeat(SEARCH_MAX_FILE_BYTES)}`);
        const r = await call('search_text', { query: 'hit', maxResults: 10 }, ctx);
        const lines = r.content.split('\n');
        assert.equal(lines.filter((l) => l.startsWith('many.txt:')).length, 10);
        assert.match(r.content, /stopped at 10 results/);
        assert.match((await call('search_text', { query: 'hit', path: 'huge.txt' }, ctx)).content, /No matches .*\n.*skipped 1 files over/);
        assert.equal((await call('search_text', { query: 'zzz', path: 'src' }, ctx)).content, 'No matches for "zzz" in src.');
      });

      it('stops at the output budget however many results were allowed', async () => {
        write('wide.txt', Array.from({ length: 1000 }, (_, i) => `hit ${i} ${'w'.repeat(200)}`).join('\n'));
        const r = await call('search_text', { query: 'hit', path: 'wide.txt', maxResults: 1000 }, ctx);
        assert.ok(r.content.length <= TOOL_OUTPUT_BUDGET_CHARS + 200, String(r.content.length));
        assert.match(r.content, /\n\[search_text: stopped at \d+ results/);
      });

      it('shortens very long matching lines', async () => {
        write('long.txt', `needle ${'y'.repeat(5000)}`);
        const r = await call('search_text', { query: 'needle', path: 'long.txt' }, ctx);
        assert.ok(r.content.length < 300 && r.content.endsWith(' …'), r.content.slice(0, 80));
      });
    });
  }

  describe('write_file', () => {
    it('creates parent directories and reports the changed path', async () => {
      const r = await call('write_file', { path: 'new/dir/x.txt', content: 'héllo' }, ctx);
      assert.equal(read('new/dir/x.txt'), 'héllo');
      assert.deepEqual(r.changedPaths, ['new/dir/x.txt']);
      assert.equal(r.content, 'Created new/dir/x.txt (6 bytes).');
    });

    it('replaces atomically (new inode, no temp files left, mode kept)', async () => {
      write('x.sh', 'old');
      fs.chmodSync(path.join(root, 'x.sh'), 0o750);
      const before = fs.statSync(path.join(root, 'x.sh')).ino;
      const r = await call('write_file', { path: 'x.sh', content: 'new' }, ctx);
      assert.match(r.content, /^Overwrote x\.sh/);
      const st = fs.statSync(path.join(root, 'x.sh'));
      assert.notEqual(st.ino, before);
      assert.equal(st.mode & 0o777, 0o750);
      assert.equal(read('x.sh'), 'new');
      assert.deepEqual(fs.readdirSync(root), ['x.sh']);
    });

    it('fails cleanly over a directory and refuses .git and escapes', async () => {
      fs.mkdirSync(path.join(root, 'd'));
      await assertRejectsCode(call('write_file', { path: 'd', content: 'x' }, ctx), 'tool/io', { type: ToolError, message: /directory/ });
      assert.deepEqual(fs.readdirSync(root), ['d']);
      await assertRejectsCode(call('write_file', { path: '.git/config', content: 'x' }, ctx), 'tool/pathEscape', ToolError);
      await assertRejectsCode(call('write_file', { path: '../evil.txt', content: 'x' }, ctx), 'tool/pathEscape', ToolError);
    });

    it('writes through a symlink inside the workspace, keeping the link', async () => {
      write('real.txt', 'a');
      fs.symlinkSync('real.txt', path.join(root, 'link.txt'));
      const r = await call('write_file', { path: 'link.txt', content: 'b' }, ctx);
      assert.deepEqual(r.changedPaths, ['real.txt']);
      assert.ok(fs.lstatSync(path.join(root, 'link.txt')).isSymbolicLink());
      assert.equal(read('real.txt'), 'b');
    });
  });

  describe('apply_edit', () => {
    it('replaces a unique snippet and reports where', async () => {
      write('a.ts', 'function f() {\n  return 1;\n}\n');
      const r = await call('apply_edit', { path: 'a.ts', oldText: '  return 1;', newText: '  return $&2;' }, ctx);
      assert.equal(read('a.ts'), 'function f() {\n  return $&2;\n}\n');
      assert.equal(r.content, 'Edited a.ts: replaced 1 occurrence at line 2.');
      assert.deepEqual(r.changedPaths, ['a.ts']);
    });

    it('explains a whitespace-only mismatch with the exact file text', async () => {
      write('a.ts', 'if (x) {\n\tcall();\n}\n');
      const e = await assertRejectsCode(call('apply_edit', { path: 'a.ts', oldText: 'if (x) {\n    call();', newText: 'y' }, ctx), 'tool/editMismatch', ToolError);
      assert.match(e.message, /lines 1-2 only when whitespace is ignored/);
      assert.ok(e.message.includes('if (x) {\n\tcall();'));
      assert.equal(read('a.ts'), 'if (x) {\n\tcall();\n}\n');
    });

    it('points at the closest line, or says nothing resembles it', async () => {
      write('a.ts', 'const value = computeTotal(items);\nother();\n');
      const e = await assertRejectsCode(call('apply_edit', { path: 'a.ts', oldText: 'const value = computeTotals(item);', newText: 'y' }, ctx), 'tool/editMismatch', ToolError);
      assert.match(e.message, /closest line .* is line 1:\nconst value = computeTotal\(items\);/);
      const e2 = await assertRejectsCode(call('apply_edit', { path: 'a.ts', oldText: 'zzzz qqqq', newText: 'y' }, ctx), 'tool/editMismatch', ToolError);
      assert.match(e2.message, /Nothing in the file resembles/);
    });

    it('asks for more context on several matches, and replaces all on request', async () => {
      write('a.ts', 'x = 1;\ny = 2;\nx = 1;\n');
      const e = await assertRejectsCode(call('apply_edit', { path: 'a.ts', oldText: 'x = 1;', newText: 'x = 3;' }, ctx), 'tool/editMismatch', ToolError);
      assert.match(e.message, /matches 2 places .* \(lines 1, 3\)\. Include more surrounding lines/);
      const r = await call('apply_edit', { path: 'a.ts', oldText: 'x = 1;', newText: 'x = 3;', replaceAll: true }, ctx);
      assert.equal(read('a.ts'), 'x = 3;\ny = 2;\nx = 3;\n');
      assert.match(r.content, /replaced 2 occurrences/);
    });

    it('keeps CRLF line endings and a BOM', async () => {
      write('w.cs', '\uFEFFclass A\r\n{\r\n    int x;\r\n}\r\n');
      await call('apply_edit', { path: 'w.cs', oldText: '{\n    int x;\n}', newText: '{\n    int x;\n    int y;\n}' }, ctx);
      assert.equal(read('w.cs'), '\uFEFFclass A\r\n{\r\n    int x;\r\n    int y;\r\n}\r\n');
    });

    it('edits mixed line endings in place', async () => {
      write('m.txt', 'a\nb\r\nc\r\nd\n');
      await call('apply_edit', { path: 'm.txt', oldText: 'b\nc', newText: 'B\nC' }, ctx);
      assert.equal(read('m.txt'), 'a\nB\r\nC\r\nd\n');
    });

    it('refuses identical texts, missing and binary files', async () => {
      await assertRejectsCode(async () => lookupTool(tools, 'apply_edit').parseArgs('{"path":"a","oldText":"x\\r\\n","newText":"x\\n"}'), 'tool/invalidArguments', { type: ToolError, message: /identical/ });
      await assertRejectsCode(call('apply_edit', { path: 'none.ts', oldText: 'a', newText: 'b' }, ctx), 'tool/notFound', { type: ToolError, message: /write_file/ });
      write('b.bin', Buffer.from([1, 0, 2]));
      assert.equal((await call('apply_edit', { path: 'b.bin', oldText: 'a', newText: 'b' }, ctx)).isError, true);
    });
  });

  describe('run_command', function () {
    this.timeout(5000);

    it('streams output and reports the exit code', async () => {
      const chunks: string[] = [];
      const r = await call('run_command', { command: 'echo out; echo err 1>&2; exit 3' }, ctxFor(root, { onOutput: (c) => chunks.push(c) }));
      assert.match(chunks.join(''), /out\n/);
      assert.match(chunks.join(''), /err\n/);
      assert.match(r.content, /out\n/);
      assert.match(r.content, /\[exit code 3\]$/);
      assert.equal(r.isError, true);
      const ok = await call('run_command', { command: 'true' }, ctx);
      assert.equal(ok.content, '(no output)\n[exit code 0]');
      assert.equal(ok.isError, false);
    });

    it('runs in a workspace subdirectory and refuses a cwd outside', async () => {
      fs.mkdirSync(path.join(root, 'sub'));
      assert.match((await call('run_command', { command: 'pwd', cwd: 'sub' }, ctx)).content, new RegExp(`^${path.join(root, 'sub')}\n`));
      await assertRejectsCode(call('run_command', { command: 'pwd', cwd: '..' }, ctx), 'tool/pathEscape', ToolError);
      await assertRejectsCode(call('run_command', { command: 'pwd', cwd: '/tmp' }, ctx), 'tool/pathEscape', ToolError);
      await assertRejectsCode(call('run_command', { command: 'pwd', cwd: 'missing' }, ctx), 'tool/notFound', ToolError);
    });

    it('on timeout kills the whole process group and says it timed out', async () => {
      const started = Date.now();
      const r = await call('run_command', { command: 'sleep 30 & echo child=$!; wait', timeoutMs: 300 }, ctx);
      assert.ok(Date.now() - started < 2500, 'did not wait for the grace period');
      assert.equal(r.isError, true);
      assert.match(r.content, /timed out after 300 ms; the process group was killed \(terminated by SIGTERM\)/);
      const pid = Number(/child=(\d+)/.exec(r.content)?.[1]);
      assert.ok(pid > 0);
      assert.ok(await processGone(pid), `sleep ${pid} survived`);
    });

    it('SIGKILLs members that ignore SIGTERM after the grace period', async () => {
      const r = await call('run_command', { command: "trap '' TERM; sleep 30 & echo child=$!; wait", timeoutMs: 200 }, ctx);
      assert.match(r.content, /timed out/);
      const pid = Number(/child=(\d+)/.exec(r.content)?.[1]);
      assert.ok(await processGone(pid, 1000), `sleep ${pid} survived SIGKILL`);
    });

    it('keeps the tail of long output with a truncation notice', async () => {
      const r = await call('run_command', { command: 'seq 1 40000' }, ctx);
      assert.match(r.content.slice(0, 80), /^\[run_command: \d+ earlier characters of output omitted\]\n\d+\n/);
      assert.equal(r.content.slice(-26), '\n39999\n40000\n[exit code 0]');
      const body = r.content.split('\n').slice(1, -1).join('\n');
      assert.ok(body.length <= RUN_COMMAND_OUTPUT_TAIL_CHARS, String(body.length));
      assert.ok(body.length > RUN_COMMAND_OUTPUT_TAIL_CHARS - 1100, String(body.length));
    });

    it('never starts the kept tail inside a surrogate pair or an ANSI sequence', () => {
      const noNewline = 'x'.repeat(10) + '\x1b[31;1m' + 'y'.repeat(5) + '😀z';
      assert.equal(safeTailStart(noNewline, 12), 17); // inside ESC[31;1m → after it
      const emoji = noNewline.indexOf('😀');
      assert.equal(safeTailStart(noNewline, emoji + 1), emoji + 2); // low surrogate → next char
      assert.equal(safeTailStart('ab\ncd', 1), 3); // a nearby line start wins
    });

    it('abort kills the group and rejects with cancelled', async () => {
      const ac = new AbortController();
      let out = '';
      const pending = call('run_command', { command: 'sleep 30 & echo child=$!; wait' }, ctxFor(root, {
        signal: ac.signal,
        onOutput: (c) => {
          out += c;
          if (/child=\d+\n/.test(out)) ac.abort();
        },
      }));
      await assertRejectsCode(pending, 'tool/cancelled', { type: ToolError, message: /process group was killed/ });
      const pid = Number(/child=(\d+)/.exec(out)?.[1]);
      assert.ok(await processGone(pid), `sleep ${pid} survived`);
      const already = new AbortController();
      already.abort();
      await assertRejectsCode(call('run_command', { command: 'echo no' }, ctxFor(root, { signal: already.signal })), 'tool/cancelled', ToolError);
    });

    it('returns promptly when a background process keeps the output open', async () => {
      const started = Date.now();
      const r = await call('run_command', { command: 'sleep 5 & echo bg=$!' }, ctx);
      const pid = Number(/bg=(\d+)/.exec(r.content)?.[1]);
      try {
        assert.ok(Date.now() - started < RUN_COMMAND_DRAIN_MS + 1000);
        assert.match(r.content, /background processes are still running/);
        assert.match(r.content, /\[exit code 0\]$/);
      } finally {
        process.kill(pid, 'SIGKILL');
      }
    });
  });
});
