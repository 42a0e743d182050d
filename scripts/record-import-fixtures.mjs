#!/usr/bin/env node
/**
 * Re-records the importer fixtures (test/fixtures/importers/) with the REAL agent CLIs, offline:
 * Claude Code and Codex run against local fake API servers (this file) whose scripted replies make
 * them read a file, run a failing shell command, edit a file, call several tools in one message,
 * start a sub-agent (Claude Code) and resume a session. The transcripts they write are copied
 * into the fixtures with the temporary paths replaced by placeholders (structure kept).
 *
 * Not run by the tests (CI has neither the time nor the packages). Install the CLIs outside the
 * repository first (their platform binaries come from optional deps, so no --omit=optional):
 *   npm install --prefix "$CLIS_ROOT/clis-cc20" @anthropic-ai/claude-code@2.0.77
 *   npm install --prefix "$CLIS_ROOT/clis-cc21" @anthropic-ai/claude-code@2.1.332
 *   npm install --prefix "$CLIS_ROOT/clis-cx63" @openai/codex@0.63.0
 *   npm install --prefix "$CLIS_ROOT/clis-cx171" @openai/codex@0.171.0
 * then: node scripts/record-import-fixtures.mjs [claude-code-2.0|claude-code-2.1|codex-0.63|codex-0.171 …]
 * (CLIS_ROOT defaults to the system temp folder, os.tmpdir(); set it for the commands above).
 */
import { createServer } from 'node:http';
import { spawnSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(REPO, 'test/fixtures/importers');
const CLIS_ROOT = process.env.CLIS_ROOT ?? os.tmpdir();
/** Placeholders the fixtures carry instead of this machine's temporary folders. */
const HOME_PLACEHOLDER = '/FIXTURE_HOME';
const WORK_PLACEHOLDER = '/FIXTURE_WORK';
/** How long one CLI invocation may take before the recording gives up (ms). */
const CLI_TIMEOUT_MS = 180_000;

const TARGETS = {
  'claude-code-2.0': { kind: 'claude', bin: `${CLIS_ROOT}/clis-cc20/node_modules/.bin/claude` },
  'claude-code-2.1': { kind: 'claude', bin: `${CLIS_ROOT}/clis-cc21/node_modules/.bin/claude` },
  'codex-0.63': { kind: 'codex', bin: `${CLIS_ROOT}/clis-cx63/node_modules/.bin/codex` },
  'codex-0.171': { kind: 'codex', bin: `${CLIS_ROOT}/clis-cx171/node_modules/.bin/codex` },
};

// ------------------------------------------------------------------ a tiny HTTP server

async function listen(handler) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body;
    try { body = raw ? JSON.parse(raw) : undefined; } catch { body = undefined; }
    try {
      await handler(req, res, body);
    } catch (e) {
      console.log('fake server failed:', e);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(e) }));
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// ------------------------------------------------------------------ Anthropic Messages API

function textOf(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content) : '')).join('\n');
}

/** The reply the fake Anthropic API gives, chosen from what the request holds. */
function claudeReply(body, ctx) {
  const tools = (body.tools ?? []).map((t) => t.name);
  const msgs = body.messages ?? [];
  const firstUser = textOf(msgs[0]?.content ?? '');
  const all = msgs.map((m) => textOf(m.content)).join('\n');
  const system = Array.isArray(body.system) ? body.system.map((s) => s.text).join('\n') : String(body.system ?? '');
  const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
  const assistantsAfter = (marker) => {
    const i = msgs.findLastIndex((m) => m.role === 'user' && textOf(m.content).includes(marker));
    return i < 0 ? -1 : msgs.slice(i).filter((m) => m.role === 'assistant').length;
  };
  if (/Warmup/.test(firstUser) && msgs.length <= 2) return { text: 'Ready.' };
  if (/detailed summary of the conversation|summarize the conversation|<summary>/i.test(textOf(lastUser?.content))) {
    return { text: '<analysis>The user asked to inspect and edit hello.txt.</analysis>\n<summary>1. Primary request: inspect and edit hello.txt in the fixture project.\n2. Files: hello.txt edited (hello → hello, fixture).\n3. Pending: nothing.</summary>' };
  }
  if (tools.length === 0) {
    if (/summar/i.test(system + textOf(lastUser?.content))) {
      return { text: '<summary>1. Primary request: inspect and edit hello.txt in the fixture project.\n2. Files: hello.txt edited (hello → hello, fixture).\n3. Pending: nothing.</summary>' };
    }
    if (/title|topic/i.test(system)) return { text: '{"isNewTopic": true, "title": "Fixture session"}' };
    return { text: 'Fixture session' };
  }
  if (all.includes('SUBAGENT-TASK') && firstUser.includes('SUBAGENT-TASK')) {
    const n = msgs.filter((m) => m.role === 'assistant').length;
    if (n === 0) return { tools: [{ name: 'Read', input: { file_path: `${ctx.work}/hello.txt` } }] };
    return { text: 'Sub-agent report: hello.txt holds one greeting line.' };
  }
  const resume = assistantsAfter('FIXTURE-RESUME');
  if (resume >= 0) {
    if (resume === 0) return { tools: [{ name: 'Bash', input: { command: 'echo resumed && wc -l hello.txt', description: 'Count lines' } }] };
    return { text: 'Resumed: hello.txt has one line.' };
  }
  const stage = assistantsAfter('FIXTURE-START');
  if (stage === 0) {
    return {
      thinking: 'I should read the file and look for the missing directory at the same time.',
      text: 'Let me look at the project first.',
      tools: [
        { name: 'Read', input: { file_path: `${ctx.work}/hello.txt` } },
        { name: 'Bash', input: { command: 'ls does-not-exist', description: 'List a missing directory' } },
        { name: 'Glob', input: { pattern: '*.txt' } },
      ],
    };
  }
  if (stage === 1) return { tools: [{ name: 'Edit', input: { file_path: `${ctx.work}/hello.txt`, old_string: 'hello', new_string: 'hello, fixture' } }] };
  if (stage === 2) {
    const task = tools.includes('Task') ? 'Task' : tools.includes('Agent') ? 'Agent' : null;
    if (task) return { tools: [{ name: task, input: { description: 'Inspect hello.txt', prompt: 'SUBAGENT-TASK: read hello.txt and report what it holds.', subagent_type: 'general-purpose' } }] };
  }
  return { text: 'Done: hello.txt now says "hello, fixture"; the missing directory does not exist.' };
}

function sseEvent(type, data) {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function anthropicStream(res, reply, model, seq) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': `req_fx${seq}` });
  const usage = { input_tokens: 1200 + seq, cache_creation_input_tokens: 0, cache_read_input_tokens: 300, output_tokens: 1 };
  res.write(sseEvent('message_start', { message: { id: `msg_fx${seq}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }));
  let index = 0;
  if (reply.thinking) {
    res.write(sseEvent('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    res.write(sseEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: reply.thinking } }));
    res.write(sseEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'RmFrZVNpZw==' } }));
    res.write(sseEvent('content_block_stop', { index }));
    index++;
  }
  if (reply.text) {
    res.write(sseEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    res.write(sseEvent('content_block_delta', { index, delta: { type: 'text_delta', text: reply.text } }));
    res.write(sseEvent('content_block_stop', { index }));
    index++;
  }
  for (const [i, t] of (reply.tools ?? []).entries()) {
    res.write(sseEvent('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_fx${seq}_${i}`, name: t.name, input: {} } }));
    res.write(sseEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(t.input) } }));
    res.write(sseEvent('content_block_stop', { index }));
    index++;
  }
  res.write(sseEvent('message_delta', { delta: { stop_reason: reply.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 40 + seq } }));
  res.write(sseEvent('message_stop', {}));
  res.end();
}

async function fakeAnthropic(ctx) {
  let seq = 0;
  return listen(async (req, res, body) => {
    seq++;
    const url = new URL(req.url, 'http://x');
    if (url.pathname.endsWith('/count_tokens')) return json(res, 200, { input_tokens: 1000 });
    if (req.method !== 'POST' || !url.pathname.endsWith('/v1/messages')) return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${url.pathname}` } });
    const reply = claudeReply(body, ctx);
    ctx.log.push({ seq, tools: (body.tools ?? []).length, reply: { text: reply.text?.slice(0, 40), tools: reply.tools?.map((t) => t.name) } });
    if (body.stream) return anthropicStream(res, reply, body.model, seq);
    const content = [];
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const [i, t] of (reply.tools ?? []).entries()) content.push({ type: 'tool_use', id: `toolu_fx${seq}_${i}`, name: t.name, input: t.input });
    return json(res, 200, { id: `msg_fx${seq}`, type: 'message', role: 'assistant', model: body.model, content, stop_reason: reply.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 100, output_tokens: 10 } });
  });
}

// ------------------------------------------------------------------ recording helpers

function scratch(name) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `vox-rec-${name}-`));
  const home = path.join(root, 'home');
  const work = path.join(root, 'work');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(path.join(work, 'hello.txt'), 'hello\n');
  spawnSync('git', ['init', '-q', '-b', 'fixture-branch'], { cwd: work });
  spawnSync('git', ['-c', 'user.email=f@x', '-c', 'user.name=f', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: work });
  return { root, home, work: fs.realpathSync(work) };
}

function run(bin, args, opts) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** Copies `from` into `to`, replacing the scratch folders (and their slugs) by placeholders. */
function copyScrubbed(from, to, s) {
  const slug = (p) => p.replace(/[^A-Za-z0-9]/g, '-');
  const swaps = [
    [s.work, WORK_PLACEHOLDER], [s.home, HOME_PLACEHOLDER], [s.root, '/FIXTURE_ROOT'],
    [slug(s.work), slug(WORK_PLACEHOLDER)], [os.homedir(), HOME_PLACEHOLDER],
  ];
  const scrub = (text) => swaps.reduce((t, [a, b]) => t.split(a).join(b), text);
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, scrub(entry.name));
    if (entry.isDirectory()) {
      fs.mkdirSync(dst, { recursive: true });
      copyScrubbed(src, dst, s);
    } else if (entry.isFile()) {
      fs.mkdirSync(path.dirname(dst), { recursive: true });
      const bytes = fs.readFileSync(src);
      fs.writeFileSync(dst, /\.(jsonl|json)$/.test(entry.name) ? scrub(bytes.toString('utf8')) : bytes);
    }
  }
}

// ------------------------------------------------------------------ Claude Code

async function recordClaude(name, bin) {
  const s = scratch(name);
  const ctx = { work: s.work, log: [] };
  const { server, url } = await fakeAnthropic(ctx);
  const env = {
    PATH: process.env.PATH, HOME: s.home, CLAUDE_CONFIG_DIR: path.join(s.home, '.claude'),
    ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-fixture', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_ERROR_REPORTING: '1',
  };
  const common = ['--output-format', 'stream-json', '--verbose', '--model', 'claude-sonnet-4-5', '--allowedTools', 'Read,Bash,Edit,Glob,Grep,Task,Agent,Write'];
  const first = await run(bin, ['-p', 'FIXTURE-START: look at hello.txt, check the missing directory, then edit the file and ask a sub-agent to inspect it.', ...common], { cwd: s.work, env });
  const sessionId = [...first.out.matchAll(/"session_id":"([^"]+)"/g)].at(-1)?.[1];
  console.log(`${name}: first run exit ${first.code}, session ${sessionId}`);
  if (first.code !== 0) console.log(first.err.slice(-2000), first.out.slice(-2000));
  if (sessionId) {
    const second = await run(bin, ['-p', 'FIXTURE-RESUME: count the lines of hello.txt.', '--resume', sessionId, ...common], { cwd: s.work, env });
    console.log(`${name}: resume exit ${second.code}`);
    const third = await run(bin, ['-p', '/compact', '--resume', sessionId, ...common], { cwd: s.work, env });
    console.log(`${name}: compact exit ${third.code}`);
  }
  server.close();
  const dst = path.join(OUT, name);
  fs.rmSync(dst, { recursive: true, force: true });
  copyScrubbed(path.join(s.home, '.claude', 'projects'), path.join(dst, 'projects'), s);
  fs.writeFileSync(path.join(dst, 'requests.log.json'), JSON.stringify(ctx.log, null, 1) + '\n');
  console.log(`${name}: ${ctx.log.length} API requests; fixtures in ${path.relative(REPO, dst)}`);
}

// ------------------------------------------------------------------ Codex (OpenAI Responses API)

const itemText = (it) => (it?.content ?? []).map((c) => c.text ?? '').join('\n');

/** The reply the fake Responses API gives, chosen from the request's input items and tools. */
function codexReply(body, ctx) {
  const input = body.input ?? [];
  const tools = body.tools ?? [];
  const names = tools.map((t) => t.name ?? t.type);
  const after = (marker) => {
    const i = input.findLastIndex((it) => it.type === 'message' && it.role === 'user' && itemText(it).includes(marker));
    return i < 0 ? -1 : input.slice(i).filter((it) => it.type === 'function_call' || it.type === 'custom_tool_call' || it.type === 'local_shell_call').length;
  };
  if (tools.length === 0) return { text: 'Fixture session' };
  const shell = (command) => {
    if (names.includes('shell')) return { kind: 'function', name: 'shell', args: { command: ['bash', '-lc', command], workdir: ctx.work } };
    if (names.includes('shell_command')) return { kind: 'function', name: 'shell_command', args: { command, workdir: ctx.work } };
    if (names.includes('exec_command')) return { kind: 'function', name: 'exec_command', args: { cmd: command, workdir: ctx.work } };
    throw new Error(`no shell tool among ${names.join(', ')}`);
  };
  const patch = '*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello, fixture\n*** End Patch\n';
  const applyPatch = () => {
    const t = tools.find((x) => x.name === 'apply_patch');
    if (t?.type === 'custom') return { kind: 'custom', name: 'apply_patch', input: patch };
    if (t) return { kind: 'function', name: 'apply_patch', args: { input: patch } };
    return shell(`apply_patch <<'EOF'\n${patch}EOF`);
  };
  const resume = after('FIXTURE-RESUME');
  if (resume >= 0) {
    if (resume === 0) return { reasoning: 'Counting lines is one shell call.', calls: [shell('wc -l hello.txt')] };
    return { text: 'Resumed: hello.txt has one line.' };
  }
  const stage = after('FIXTURE-START');
  if (stage === 0) return { reasoning: 'I will read the file and probe the missing directory together.', text: 'Looking at the project.', calls: [shell('cat hello.txt'), shell('ls does-not-exist')] };
  if (stage === 2) return { calls: [applyPatch()] };
  return { text: 'Done: hello.txt now says "hello, fixture"; the missing directory does not exist.' };
}

function responsesStream(res, reply, model, seq) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': `req_fx${seq}` });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const respId = `resp_fx${seq}`;
  ev('response.created', { response: { id: respId, object: 'response', model, status: 'in_progress', output: [] } });
  let n = 0;
  const done = (item) => {
    ev('response.output_item.added', { output_index: n, item: { ...item, status: 'in_progress' } });
    ev('response.output_item.done', { output_index: n, item });
    n++;
  };
  if (reply.reasoning) {
    const id = `rs_fx${seq}`;
    ev('response.output_item.added', { output_index: n, item: { type: 'reasoning', id, summary: [] } });
    ev('response.reasoning_summary_part.added', { item_id: id, output_index: n, summary_index: 0, part: { type: 'summary_text', text: '' } });
    ev('response.reasoning_summary_text.delta', { item_id: id, output_index: n, summary_index: 0, delta: reply.reasoning });
    ev('response.reasoning_summary_text.done', { item_id: id, output_index: n, summary_index: 0, text: reply.reasoning });
    ev('response.output_item.done', { output_index: n, item: { type: 'reasoning', id, summary: [{ type: 'summary_text', text: reply.reasoning }], encrypted_content: null } });
    n++;
  }
  if (reply.text) {
    const id = `msg_fx${seq}`;
    ev('response.output_item.added', { output_index: n, item: { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] } });
    ev('response.content_part.added', { item_id: id, output_index: n, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    ev('response.output_text.delta', { item_id: id, output_index: n, content_index: 0, delta: reply.text });
    ev('response.output_text.done', { item_id: id, output_index: n, content_index: 0, text: reply.text });
    ev('response.output_item.done', { output_index: n, item: { type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] } });
    n++;
  }
  for (const [i, c] of (reply.calls ?? []).entries()) {
    const callId = `call_fx${seq}_${i}`;
    if (c.kind === 'custom') done({ type: 'custom_tool_call', id: `ctc_fx${seq}_${i}`, call_id: callId, name: c.name, input: c.input, status: 'completed' });
    else done({ type: 'function_call', id: `fc_fx${seq}_${i}`, call_id: callId, name: c.name, arguments: JSON.stringify(c.args), status: 'completed' });
  }
  ev('response.completed', {
    response: {
      id: respId, object: 'response', model, status: 'completed', output: [],
      usage: { input_tokens: 2000 + seq, input_tokens_details: { cached_tokens: 500 }, output_tokens: 60 + seq, output_tokens_details: { reasoning_tokens: reply.reasoning ? 20 : 0 }, total_tokens: 2060 + 2 * seq },
    },
  });
  res.end();
}

async function fakeResponses(ctx) {
  let seq = 0;
  return listen(async (req, res, body) => {
    seq++;
    const url = new URL(req.url, 'http://x');
    if (process.env.RECORD_DEBUG) console.log('codex request', req.method, url.pathname, req.headers.upgrade ?? '', JSON.stringify(body ?? null).slice(0, 300));
    if (req.method === 'GET' && url.pathname.endsWith('/models')) return json(res, 200, { object: 'list', data: [{ id: 'gpt-5-codex', object: 'model', owned_by: 'fixture' }], models: [] });
    if (req.method !== 'POST' || !url.pathname.endsWith('/responses')) return json(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' } });
    const reply = codexReply(body, ctx);
    ctx.log.push({ seq, tools: (body.tools ?? []).map((t) => t.name ?? t.type), reply: { text: reply.text?.slice(0, 40), calls: reply.calls?.map((c) => c.name) } });
    return responsesStream(res, reply, body.model, seq);
  });
}

async function recordCodex(name, bin) {
  const s = scratch(name);
  const ctx = { work: s.work, log: [] };
  const { server, url } = await fakeResponses(ctx);
  const codexHome = path.join(s.home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(path.join(codexHome, 'config.toml'), [
    'model = "gpt-5-codex"', 'model_provider = "fixture"', 'model_reasoning_effort = "low"', '',
    '[model_providers.fixture]', 'name = "fixture"', `base_url = "${url}/v1"`, 'wire_api = "responses"', 'env_key = "FIXTURE_API_KEY"',
    'request_max_retries = 0', 'stream_max_retries = 0', '',
  ].join('\n'));
  const env = { PATH: process.env.PATH, HOME: s.home, CODEX_HOME: codexHome, FIXTURE_API_KEY: 'sk-fixture', RUST_LOG: 'error', NO_COLOR: '1' };
  const common = ['--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
  const first = await run(bin, ['exec', ...common, 'FIXTURE-START: look at hello.txt, check the missing directory, then patch the file.'], { cwd: s.work, env });
  const id = first.out.match(/"(?:thread_id|session_id)":"([^"]+)"/)?.[1] ?? first.out.match(/"id":"([0-9a-f-]{36})"/)?.[1];
  console.log(`${name}: first run exit ${first.code}, session ${id}`);
  if (first.code !== 0 || !id) console.log(first.err.slice(-3000), first.out.slice(-3000));
  if (id) {
    const second = await run(bin, ['exec', ...common, 'resume', id, 'FIXTURE-RESUME: count the lines of hello.txt.'], { cwd: s.work, env });
    console.log(`${name}: resume exit ${second.code}`);
    if (second.code !== 0) console.log(second.err.slice(-3000), second.out.slice(-2000));
  }
  server.close();
  const dst = path.join(OUT, name);
  fs.rmSync(dst, { recursive: true, force: true });
  copyScrubbed(path.join(codexHome, 'sessions'), path.join(dst, 'sessions'), s);
  fs.writeFileSync(path.join(dst, 'requests.log.json'), JSON.stringify(ctx.log, null, 1) + '\n');
  console.log(`${name}: ${ctx.log.length} API requests; fixtures in ${path.relative(REPO, dst)}`);
}

const only = process.argv.slice(2);
for (const [name, t] of Object.entries(TARGETS)) {
  if (only.length && !only.includes(name)) continue;
  if (!fs.existsSync(t.bin)) {
    console.log(`${name}: ${t.bin} is not installed; skipped`);
    continue;
  }
  if (t.kind === 'claude') await recordClaude(name, t.bin);
  else if (t.kind === 'codex') await recordCodex(name, t.bin);
}
