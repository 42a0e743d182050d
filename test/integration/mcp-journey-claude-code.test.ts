/**
 * SPEC journey 10 with the real Claude Code CLI (@anthropic-ai/claude-code 2.0.77, pure JS), offline:
 * Claude Code connects to `vox mcp serve --stdio --grant readOnly` (its --mcp-config, strict), and
 * the fake Anthropic server plays the model: it calls mcp__vox__list_threads, then
 * mcp__vox__read_thread, then mcp__vox__start_thread with runtimeMode fullAccess, then answers.
 * From the requests Claude Code sent back we assert that it got the threads' content in its
 * tool results; that the tools it offered the model never included start_thread (a read-only
 * grant lists only what it may call), so the scripted call of it anyway fails; and the database
 * shows no new thread. (The server's own refusal of a start above the grant, `escalation`, is
 * tested with the SDK client in mcp-server-stdio.test.ts.)
 * Slow (a real agent CLI and a real Vox process); skipped, saying why, only when the CLI package is missing.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli';
import { startFakeAnthropic, textTurn, toolCallTurn, type FakeServer, type RecordedRequest } from '../support/fake-anthropic-server';
import { startFakeOpenAI, type FakeServer as OpenAiServer } from '../support/fake-openai-server';
import { textTurn as openaiText } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { seedThreads, SEED_ANSWERS, SEED_PROMPTS, voxServeCommand } from '../support/mcp-fixtures';
import { openaiHost } from '../support/scripted';
import { startTestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const CLAUDE_CLI = path.join(REPO_ROOT, 'node_modules/@anthropic-ai/claude-code/cli.js');
/** How long Claude Code may take for the whole scripted session. */
const CLAUDE_RUN_TIMEOUT_MS = 100_000;

interface Block { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean; name?: string; id?: string; text?: string }

function blocks(req: RecordedRequest): Block[] {
  const msgs = (req.body?.messages ?? []) as Array<{ content: string | Block[] }>;
  return msgs.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('\n');
  return '';
}

/** The tool result Claude Code sent for its call of `tool` (found through the tool_use id), from the last request that holds it. */
function toolResult(requests: RecordedRequest[], tool: string): { text: string; isError: boolean } | null {
  for (const req of [...requests].reverse()) {
    const all = blocks(req);
    const use = all.find((b) => b.type === 'tool_use' && b.name === tool);
    const res = use && all.find((b) => b.type === 'tool_result' && b.tool_use_id === use.id);
    if (res) return { text: textOf(res.content), isError: res.is_error === true };
  }
  return null;
}

function run(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLAUDE_CLI, ...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLAUDE_RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('journey 10: Claude Code on vox mcp serve with a read-only grant', function () {
  this.timeout(120_000);
  this.slow(30_000);
  let dir: string;
  let anthropic: FakeServer | undefined;
  let openai: OpenAiServer | undefined;

  before(function () {
    if (!fs.existsSync(CLAUDE_CLI)) {
      console.warn(`    SKIPPED journey 10: the Claude Code CLI is not installed (${path.relative(REPO_ROOT, CLAUDE_CLI)} missing; it is a devDependency: npm ci)`);
      this.skip();
    }
  });
  afterEach(async () => {
    await anthropic?.close();
    await openai?.close();
    if (dir) removeTmpDir(dir);
  });

  it('reads the threads through Vox; start_thread is not among its tools (read-only grant), a call of it anyway fails; no thread is created', async () => {
    dir = makeTmpDir();
    const home = path.join(dir, 'vox-home');
    fs.mkdirSync(home);
    const ws = initRepo(path.join(dir, 'ws'), { 'README.md': '# ws\n' });
    openai = await startFakeOpenAI({ responses: SEED_ANSWERS.map((a) => openaiText(a)) });
    const t = startTestEngine({ dir: home, workspaceRoot: ws, host: openaiHost(openai), config: { demoModelPath: '/nonexistent.gguf' } });
    const threads = await seedThreads(t.client());
    await t.dispose();

    // The model's script, chosen from what Claude Code sends: side requests (no Vox tools) get a short text.
    anthropic = await startFakeAnthropic({
      responses: [],
      routes: { '/v1/messages/count_tokens': () => ({ input_tokens: 100 }) },
      route: (req) => {
        const tools = ((req.body?.tools ?? []) as Array<{ name: string }>).map((x) => x.name);
        if (!tools.includes('mcp__vox__list_threads')) return textTurn('Vox threads');
        const done = blocks(req).filter((b) => b.type === 'tool_result').length;
        if (done === 0) return toolCallTurn([{ name: 'mcp__vox__list_threads', args: {} }]);
        if (done === 1) return toolCallTurn([{ name: 'mcp__vox__read_thread', args: { threadId: threads[0] } }]);
        if (done === 2) return toolCallTurn([{ name: 'mcp__vox__start_thread', args: { prompt: 'Fix the login bug', runtimeMode: 'fullAccess', interactionMode: 'default' } }]);
        return textTurn('I read the Vox threads; starting a full-access thread was refused.');
      },
    });

    const serve = voxServeCommand(REPO_ROOT, 'readOnly', ws);
    const configFile = path.join(dir, 'mcp.json');
    fs.writeFileSync(configFile, JSON.stringify({ mcpServers: { vox: { command: serve.command, args: serve.args, env: { VOX_HOME: home, PATH: process.env.PATH ?? '' } } } }));
    const claudeHome = path.join(dir, 'claude-home');
    fs.mkdirSync(claudeHome);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH, HOME: claudeHome, CLAUDE_CONFIG_DIR: path.join(claudeHome, '.claude'),
      ANTHROPIC_BASE_URL: anthropic.baseUrl, ANTHROPIC_API_KEY: 'sk-ant-journey10', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_ERROR_REPORTING: '1',
    };
    const r = await run([
      '-p', 'Look at my Vox threads and start one to fix the login bug.',
      '--output-format', 'stream-json', '--verbose', '--model', 'claude-sonnet-4-5',
      '--mcp-config', configFile, '--strict-mcp-config',
      '--allowedTools', 'mcp__vox__list_threads,mcp__vox__read_thread,mcp__vox__start_thread',
    ], { cwd: ws, env });
    const context = () => `exit ${r.code}\nstderr: ${r.err.slice(-2000)}\nstdout: ${r.out.slice(-3000)}`;
    assert.equal(r.code, 0, context());

    const listed = toolResult(anthropic.requests, 'mcp__vox__list_threads');
    assert.ok(listed && !listed.isError, `list_threads result: ${JSON.stringify(listed)}\n${context()}`);
    for (const id of threads) assert.ok(listed.text.includes(id), `list_threads names ${id}`);
    assert.ok(listed.text.includes(SEED_PROMPTS[0]!), 'list_threads carries the titles');
    const read = toolResult(anthropic.requests, 'mcp__vox__read_thread');
    assert.ok(read && !read.isError && read.text.includes(SEED_ANSWERS[0]!), `read_thread result: ${JSON.stringify(read)}`);
    const offered = new Set(anthropic.requests.flatMap((q) => ((q.body?.tools ?? []) as Array<{ name: string }>).map((x) => x.name)));
    assert.ok(offered.has('mcp__vox__read_thread') && !offered.has('mcp__vox__start_thread'), `the tools Claude Code offered: ${[...offered].filter((n) => n.startsWith('mcp__vox__')).join(', ')}`);
    const start = toolResult(anthropic.requests, 'mcp__vox__start_thread');
    assert.ok(start, `start_thread result missing\n${context()}`);
    assert.equal(start.isError, true, `start_thread must fail: ${start.text}`);
    assert.match(r.out, /starting a full-access thread was refused/);

    const after = startTestEngine({ dir: home, workspaceRoot: ws, config: { demoModelPath: '/nonexistent.gguf' } });
    try {
      const list = await after.client().call('listThreads', {});
      assert.deepEqual(list.threads.map((x) => x.id).sort(), [...threads].sort(), 'no thread was created');
    } finally {
      await after.dispose();
    }
  });
});
