/**
 * Rate-limit recovery (SPEC 2.4) end to end: local OpenAI- and Anthropic-wire servers answer 429
 * with each header style (Retry-After in seconds and as an HTTP date, OpenAI's
 * x-ratelimit-reset-* durations, Anthropic's RFC 3339 resets, a body hint, nothing at all); the
 * run waits on the engine's (manual) clock until exactly that reset and then retries the same
 * model call; snooze and auto-resume off are honoured; a wait survives the engine going away and
 * is re-armed by the next engine on the same database, without repeating a completed tool call;
 * a quota that waiting will not fix, or a reset too far away, is a clear failure.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineClient } from '../../src/client/engine-client';
import { BACKOFF_BASE_MS, MAX_RATE_LIMIT_WAIT_MS, RESET_MARGIN_MS } from '../../src/engine/runs/rate-limit';
import { VoxStore } from '../../src/engine/store/store';
import type { StoredEvent } from '../../src/protocol/events';
import { httpError, startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { ManualClock } from '../support/manual-clock';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { CLI_ENTRY, REPO_ROOT, runVox } from '../support/cli';
import { spawn } from 'node:child_process';
import { until } from '../support/wait';

/** Fixed backoff jitter: `random() = 0.5` gives ¾ of the nominal delay. */
const HALF = () => 0.5;

describe('rate limits: wait, resume, snooze, re-arm', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;
  let clock: ManualClock;

  function engine(kind: 'openai' | 'anthropic' = 'openai', approval?: unknown): TestEngine {
    const host = kind === 'openai'
      ? new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, approval })
      : new TestHost({ model: 'anthropic:claude-test', secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl }, approval });
    const engineClock = { now: () => clock.now, setTimeout: (fn: () => void, ms: number) => clock.setTimeout(fn, ms), clearTimeout: (h: unknown) => clock.clearTimeout(h) };
    t = startTestEngine({ dir, host, config: { clock: engineClock, random: HALF } });
    return t;
  }
  const events = (te: TestEngine, type: string): StoredEvent[] => {
    const s = VoxStore.open(te.dbPath, { readonly: true });
    try {
      return s.eventsAfter(0).filter((e) => e.type === type);
    } finally {
      s.close();
    }
  };
  const waitEvent = async (te: TestEngine, n = 1) => {
    await until(() => events(te, 'run.waitingRateLimit').length >= n, { what: `${n} rate-limit wait(s)`, everyMs: 10 });
    return events(te, 'run.waitingRateLimit')[n - 1] as Extract<StoredEvent, { type: 'run.waitingRateLimit' }>;
  };
  /** Moves the manual clock to `target` in small steps, letting the waiting run react between them. */
  async function advanceTo(target: number): Promise<void> {
    while (clock.now < target) {
      clock.advance(Math.min(250, target - clock.now));
      await new Promise((r) => setImmediate(r));
    }
  }
  const runOf = async (c: EngineClient, threadId: string) => (await c.call('getThread', { threadId })).runs[0]!;

  beforeEach(() => {
    dir = makeTmpDir();
    clock = new ManualClock();
    clock.now = Date.now();
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  const cases: { name: string; wire: 'openai' | 'anthropic'; response: () => FakeResponse; expectedDelayMs: number | null; source: 'provider' | 'backoff' }[] = [
    { name: 'Retry-After in seconds', wire: 'openai', response: () => httpError(429, { headers: { 'retry-after': '7' } }), expectedDelayMs: 7_000, source: 'provider' },
    { name: 'Retry-After as an HTTP date', wire: 'openai', response: () => httpError(429, { headers: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() } }), expectedDelayMs: 30_000, source: 'provider' },
    {
      name: "OpenAI's x-ratelimit-reset-requests (1m30s style)", wire: 'openai', source: 'provider', expectedDelayMs: 90_000,
      response: () => httpError(429, { headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m30s', 'x-ratelimit-remaining-tokens': '500', 'x-ratelimit-reset-tokens': '2s' } }),
    },
    {
      name: "Anthropic's anthropic-ratelimit-*-reset (RFC 3339)", wire: 'anthropic', source: 'provider', expectedDelayMs: 45_000,
      response: () => httpError(429, { headers: { 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': new Date(Date.now() + 45_000).toISOString() } }),
    },
    {
      name: 'a body hint ("Please try again in 20s")', wire: 'openai', source: 'provider', expectedDelayMs: 20_000,
      response: () => httpError(429, { body: { error: { message: 'Rate limit reached for gpt-test. Please try again in 20s.', type: 'requests', code: 'rate_limit_exceeded' } } }),
    },
    { name: 'no reset at all (exponential backoff with jitter)', wire: 'openai', response: () => httpError(429), expectedDelayMs: null, source: 'backoff' },
  ];

  for (const k of cases) {
    it(`429 with ${k.name}: the thread waits until the reset, then the same call is retried and the turn completes`, async () => {
      server = await (k.wire === 'openai' ? startFakeOpenAI : startFakeAnthropic)({ responses: [k.response(), textTurn(['after ', 'the wait'])] });
      const te = engine(k.wire);
      const c = te.client();
      const sentAt = Date.now();
      const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'hello' });
      const w = await waitEvent(te);
      assert.equal(w.source, k.source);
      const delay = w.resetAtMs - clock.now;
      if (k.expectedDelayMs !== null) {
        // Parsed against the wall clock when the 429 arrived (a second's slack for HTTP dates, which have whole seconds).
        const expected = k.expectedDelayMs + RESET_MARGIN_MS + (Date.now() - sentAt);
        assert.ok(Math.abs(delay - expected) <= 1_500, `waits ${delay} ms, expected about ${expected} ms`);
      } else {
        assert.equal(delay, Math.round(BACKOFF_BASE_MS * 0.75));
      }
      const waiting = (await runOf(c, threadId)).waiting;
      assert.deepEqual([waiting?.autoResume, waiting?.snoozedUntilMs, waiting?.resetAtMs], [true, null, w.resetAtMs]);
      assert.equal((await c.call('listRuns', {})).runs[0]!.waiting?.resetAtMs, w.resetAtMs);
      await advanceTo(w.resetAtMs - 1);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(server.requests.length, 1, 'no retry before the reset');
      await advanceTo(w.resetAtMs);
      await until(async () => (await runOf(c, threadId)).status === 'completed', { what: 'the run completed', everyMs: 10 });
      assert.equal(server.requests.length, 2);
      const thread = await c.call('getThread', { threadId });
      assert.equal(thread.messages.at(-1)!.content, 'after the wait');
      assert.equal((await runOf(c, threadId)).waiting, null);
      const resumed = events(te, 'run.resumed');
      assert.deepEqual(resumed.map((e) => e.type === 'run.resumed' && [e.runId, e.by]), [[runId, 'timer']]);
    });
  }

  it('auto-resume off waits past the reset until asked; snooze holds it until the snooze ends; Resume now retries at once', async () => {
    server = await startFakeOpenAI({ responses: [httpError(429, { headers: { 'retry-after': '5' } }), httpError(429, { headers: { 'retry-after': '5' } }), textTurn('finally')] });
    const te = engine();
    const c = te.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'hello' });
    const w = await waitEvent(te);
    const off = await c.call('setAutoResume', { runId: runId!, autoResume: false });
    assert.equal(off.waiting?.autoResume, false);
    await advanceTo(w.resetAtMs + 60_000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.requests.length, 1, 'auto-resume off: still waiting a minute after the reset');
    const snoozed = await c.call('snoozeRun', { runId: runId!, forMs: 120_000 });
    assert.deepEqual([snoozed.waiting?.autoResume, snoozed.waiting?.snoozedUntilMs], [true, clock.now + 120_000]);
    await advanceTo(clock.now + 119_000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.requests.length, 1, 'snoozed: not before the snooze ends');
    await advanceTo(snoozed.waiting!.snoozedUntilMs!);
    const w2 = await waitEvent(te, 2); // the retry hit the second 429
    assert.equal(w2.attempt, 1);
    await c.call('resumeRun', { runId: runId! });
    await until(async () => (await runOf(c, threadId)).status === 'completed', { what: 'the run completed', everyMs: 10 });
    assert.deepEqual(events(te, 'run.resumed').map((e) => e.type === 'run.resumed' && e.by), ['timer', 'user']);
    assert.equal((await c.call('getThread', { threadId })).messages.at(-1)!.content, 'finally');
    // Controls on a run that is not waiting are typed errors.
    await assert.rejects(c.call('snoozeRun', { runId: runId!, forMs: 1_000 }), (e: Error & { code?: string }) => e.code === 'notWaiting');
  });

  it('a wait survives the engine going away: the next engine on the same database re-arms it, and the completed tool call is not repeated', async () => {
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: 'made.txt', content: 'once\n' } }]),
        httpError(429, { headers: { 'retry-after': '30' } }),
        textTurn('done after the restart'),
      ],
    });
    const first = engine('openai', { write: 'auto' });
    const c1 = first.client();
    const { threadId, runId } = await c1.call('sendPrompt', { threadId: null, prompt: 'make the file' });
    const w = await waitEvent(first);
    assert.equal(fs.readFileSync(path.join(dir, 'made.txt'), 'utf8'), 'once\n');
    fs.writeFileSync(path.join(dir, 'made.txt'), 'changed by the user meanwhile\n');
    await first.dispose(); // as VS Code closing: the waiting run is suspended, not cancelled
    t = undefined;
    assert.equal(events(first, 'run.ended').length, 0, 'no run.ended: the run still waits in the store');

    const second = engine('openai', { write: 'auto' });
    const c2 = second.client();
    await until(async () => (await c2.call('listRuns', {})).runs.length === 1, { what: 're-armed', everyMs: 10 });
    assert.equal(events(second, 'run.claimed').length, 1);
    await advanceTo(w.resetAtMs - 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.requests.length, 2, 'still waiting for the reset after the restart');
    await advanceTo(w.resetAtMs);
    await until(async () => (await runOf(c2, threadId)).status === 'completed', { what: 'the run completed', everyMs: 10 });
    assert.equal(fs.readFileSync(path.join(dir, 'made.txt'), 'utf8'), 'changed by the user meanwhile\n', 'write_file did not run again');
    const s = VoxStore.open(second.dbPath, { readonly: true });
    const items = s.items(runId!);
    s.close();
    assert.deepEqual(items.map((i) => [i.kind, i.toolName]), [['toolCall', 'write_file'], ['text', null]]);
    // The retried call carried the tool's result from before the restart.
    const retried = server.requests[2]!.body.messages as { role: string; content: unknown; tool_calls?: unknown[] }[];
    assert.deepEqual(retried.slice(-2).map((m) => m.role), ['assistant', 'tool']);
    assert.match(String(retried.at(-1)!.content), /made\.txt/);
    assert.equal((await c2.call('getThread', { threadId })).messages.at(-1)!.content, 'done after the restart');
  });

  it('a quota that waiting will not fix, and a reset too far away, fail the run with a clear message instead of waiting', async () => {
    server = await startFakeOpenAI({
      responses: [
        httpError(429, { body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } } }),
        httpError(429, { headers: { 'retry-after': String((MAX_RATE_LIMIT_WAIT_MS / 1000) * 2) } }),
      ],
    });
    const te = engine();
    const c = te.client();
    const a = await c.call('sendPrompt', { threadId: null, prompt: 'one' });
    await until(async () => (await runOf(c, a.threadId)).status === 'failed', { what: 'failed', everyMs: 10 });
    assert.match((await runOf(c, a.threadId)).error ?? '', /out of quota or credit; waiting will not help/);
    const b = await c.call('sendPrompt', { threadId: null, prompt: 'two' });
    await until(async () => (await runOf(c, b.threadId)).status === 'failed', { what: 'failed', everyMs: 10 });
    assert.match((await runOf(c, b.threadId)).error ?? '', /more than 6 h away; not waiting/);
    assert.equal(events(te, 'run.waitingRateLimit').length, 0);
  });
});

describe('rate limits from the CLI (real processes, real clock)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    removeTmpDir(dir);
  });

  it('`vox chat` says it is rate limited and when it retries, then finishes; `vox runs resume` takes over a wait left by a closed window', async () => {
    server = await startFakeOpenAI({ responses: [httpError(429, { headers: { 'retry-after': '1' } }), textTurn('answered after one second')] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const r = await runVox(['chat', '--model', 'openai:gpt-test', '--cwd', dir, 'hello'], env);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /Rate limited; retrying at \d{4}-/);
    assert.match(r.out, /answered after one second/);

    // A terminal closed (the process killed) while its run waited for an hour; another terminal takes it over.
    server.push(httpError(429, { headers: { 'retry-after': '3600' } }), textTurn('taken over by the terminal'));
    const waiting = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'chat', '--model', 'openai:gpt-test', '--cwd', dir, 'wait for an hour'], { cwd: REPO_ROOT, env, stdio: 'ignore' });
    const store = () => VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    let runId = '';
    await until(() => {
      const s = store();
      try {
        runId = s.waitingRuns()[0]?.id ?? '';
        return runId !== '';
      } finally {
        s.close();
      }
    }, { what: 'the run waits', everyMs: 10 });
    waiting.kill('SIGKILL');
    await new Promise((r) => waiting.once('exit', r));
    const list = await runVox(['runs', 'list', '--cwd', dir, '--json'], env);
    assert.equal(list.code, 0, list.err);
    const waits = JSON.parse(list.out) as { runId: string; orphaned: boolean }[];
    assert.deepEqual(waits.map((w) => [w.runId, w.orphaned]), [[runId, true]]);
    const resumed = await runVox(['runs', 'resume', runId, '--cwd', dir], env);
    assert.equal(resumed.code, 0, resumed.err);
    assert.match(resumed.err, /took over/);
    assert.match(resumed.out, /taken over by the terminal/);
    const bad = await runVox(['runs', 'resume', runId, '--cwd', dir], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /RunError \(notWaiting\)/);
  });
});
