/**
 * Special files: no tool opens a FIFO, a socket or a device. `search_text` on a FIFO used to block
 * forever (and keep the process from exiting); every file tool now refuses such paths with a
 * message naming what they are, walks skip them, `write_file` does not replace them, and
 * `list_files` lists them without opening them. Every call is bounded, so a regression fails
 * instead of hanging; `afterEach` opens the FIFO's write end so a reader stuck in open(2) is freed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { ripgrepOnPath } from '../../src/engine/tools/ripgrep';
import { ToolError, type ToolContext, type ToolResult } from '../../src/engine/tools/types';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { withTimeout } from '../support/wait';

const tools = builtinToolRegistry();
/** A tool call on a special file must answer within this. */
const CALL_BOUND_MS = 3000;

async function call(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const tool = tools.lookup(name);
  return withTimeout(`${name} ${JSON.stringify(args)}`, CALL_BOUND_MS, tool.run(tool.parseArgs(JSON.stringify(args)), ctx));
}

/** The call's text, whether it returned an error result or threw a ToolError. */
async function refusal(name: string, args: unknown, ctx: ToolContext): Promise<string> {
  try {
    const r = await call(name, args, ctx);
    assert.equal(r.isError, true, `expected a refusal, got ${r.content}`);
    return r.content;
  } catch (e) {
    assert.ok(e instanceof ToolError, `expected a ToolError, got ${String(e)}`);
    return e.message;
  }
}

describe('special files (FIFOs, sockets, devices)', function () {
  this.timeout(20_000);
  if (process.platform === 'win32') return;
  let root: string;
  let fifo: string;
  let server: net.Server | undefined;
  const rg = ripgrepOnPath();
  const modes: Array<[string, Partial<ToolContext>]> = [['built-in walk', {}], ...(rg ? [['ripgrep', { ripgrepPath: rg }] as [string, Partial<ToolContext>]] : [])];

  beforeEach(async () => {
    root = fs.realpathSync(makeTmpDir('vox-special-'));
    fs.writeFileSync(path.join(root, 'ok.txt'), 'needle\n');
    fifo = path.join(root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    server = net.createServer();
    await new Promise<void>((r) => server!.listen(path.join(root, 'sock'), r));
  });
  afterEach(async () => {
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)); // frees a reader blocked in open(2)
    } catch {
      // ENXIO: nobody has it open, as it should be
    }
    await new Promise((r) => server?.close(r));
    removeTmpDir(root);
  });

  for (const [mode, extra] of modes) {
    describe(mode, () => {
      let ctx: ToolContext;
      beforeEach(() => {
        ctx = { workspaceRoot: root, signal: new AbortController().signal, ...extra };
      });

      it('search_text refuses a FIFO or a socket named as its path, and answers', async () => {
        assert.match(await refusal('search_text', { query: 'x', path: 'pipe' }, ctx), /pipe is a FIFO.*not a regular file/);
        assert.match(await refusal('search_text', { query: 'x', path: 'sock' }, ctx), /sock is a socket.*not a regular file/);
      });

      it('search_text over a directory skips them and finds the rest', async () => {
        assert.equal((await call('search_text', { query: 'needle' }, ctx)).content, 'ok.txt:1: needle');
      });

      it('list_files lists them without opening them', async () => {
        assert.equal((await call('list_files', {}, ctx)).content, 'ok.txt\npipe\nsock');
      });
    });
  }

  it('read_file and apply_edit refuse them, naming what they are', async () => {
    const ctx = { workspaceRoot: root, signal: new AbortController().signal };
    assert.match(await refusal('read_file', { path: 'pipe' }, ctx), /pipe is a FIFO/);
    assert.match(await refusal('read_file', { path: 'sock' }, ctx), /sock is a socket/);
    assert.match(await refusal('apply_edit', { path: 'pipe', oldText: 'a', newText: 'b' }, ctx), /pipe is a FIFO/);
  });

  it('write_file refuses to replace a FIFO or a socket, which stay as they were', async () => {
    const ctx = { workspaceRoot: root, signal: new AbortController().signal };
    assert.match(await refusal('write_file', { path: 'pipe', content: 'x' }, ctx), /pipe is a FIFO/);
    assert.match(await refusal('write_file', { path: 'sock', content: 'x' }, ctx), /sock is a socket/);
    assert.ok(fs.lstatSync(fifo).isFIFO());
    assert.ok(fs.lstatSync(path.join(root, 'sock')).isSocket());
    assert.deepEqual(fs.readdirSync(root).sort(), ['ok.txt', 'pipe', 'sock']);
  });

  it('a character device inside the workspace is refused too (where mknod is allowed)', async function () {
    try {
      execFileSync('mknod', [path.join(root, 'zero'), 'c', '1', '5'], { stdio: 'ignore' });
    } catch {
      this.skip(); // not root, or no CAP_MKNOD in this container
    }
    const ctx = { workspaceRoot: root, signal: new AbortController().signal };
    assert.match(await refusal('read_file', { path: 'zero' }, ctx), /zero is a character device/);
    assert.match(await refusal('search_text', { query: 'x', path: 'zero' }, ctx), /zero is a character device/);
  });
});
