/**
 * The context capability through the protocol on a real engine (real SQLite, the official SDKs
 * against loopback servers speaking OpenAI's and Anthropic's wire formats): the context meter's
 * estimate (exact gpt-tokenizer counts, the model's window, the overflow), @-mentions resolved
 * into what the model receives and the thread keeps (a missing file is a visible warning), the
 * output-token-limit notice (`finish_reason: length`, `stop_reason: max_tokens`), and a stopped
 * run that keeps the tokens it used (estimated, and marked so).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/engine/conversation/history';
import { OPENAI_REPLY_PRIMING_TOKENS, OPENAI_TOKENS_PER_MESSAGE, countText } from '../../src/engine/providers/token-count';
import { splitContext } from '../../src/protocol/mentions';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

type Ev = { type: string; runId?: string; role?: string; content?: string; stopReason?: string; usage?: { inputTokens: number; outputTokens: number; estimated?: boolean } };

describe('context: meter, mentions, output limit and stopped usage over the protocol', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine;

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
    fs.writeFileSync(path.join(dir, 'notes.md'), 'The meter counts tokens.\n');
  });
  afterEach(async () => {
    await t.dispose();
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  const openai = (s: FakeServer) => startTestEngine({ dir, host: new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: s.baseUrl } }) });

  async function events(threadId: string, until: (evs: Ev[]) => boolean): Promise<Ev[]> {
    const c = t.client();
    const evs: Ev[] = [];
    c.on('events', (u) => void evs.push(...(u.events as Ev[])));
    await c.call('subscribeThread', { threadId, afterSeq: 0 });
    await waitFor('thread events', 30_000, () => until(evs), 20);
    return evs;
  }
  const ended = (evs: Ev[]) => evs.some((e) => e.type === 'run.ended');

  it('estimates a new thread\'s first request with gpt-tokenizer, against the model\'s window', async () => {
    server = await startFakeOpenAI({ responses: [] });
    t = openai(server);
    const e = await t.client().call('estimateContext', { threadId: null, draft: 'Explain the context meter.', model: 'openai:gpt-4o' });
    assert.equal(e.source, 'o200k_base');
    assert.equal(e.window, 128_000);
    assert.equal(e.windowSource, 'table');
    assert.equal(e.parts.prompt, 5);
    assert.equal(e.parts.system, await countText('o200k_base', DEFAULT_SYSTEM_PROMPT));
    // system + user message with OpenAI's framing, plus the tool definitions.
    assert.equal(e.tokens, OPENAI_REPLY_PRIMING_TOKENS + 2 * OPENAI_TOKENS_PER_MESSAGE + e.parts.system + 5 + e.parts.tools);
    assert.ok(e.parts.tools > 0, 'tool definitions are counted');
    assert.equal(e.fits, true);
    assert.equal(server.requests.length, 0, 'estimating sends nothing to the provider');
  });

  it('a prompt that does not fit the window is reported (fits: false) with its mentions sized', async () => {
    server = await startFakeOpenAI({ responses: [] });
    t = openai(server);
    const words = Array.from({ length: 9000 }, (_, i) => `word${i}`).join(' ');
    fs.writeFileSync(path.join(dir, 'big.txt'), words.slice(0, 39_000));
    const e = await t.client().call('estimateContext', { threadId: null, draft: 'summarise', model: 'openai:gpt-4', mentions: [{ kind: 'file', target: 'big.txt' }] });
    assert.equal(e.window, 8_192);
    assert.equal(e.source, 'cl100k_base');
    assert.equal(e.fits, false);
    assert.ok(e.tokens > 8_192, `${e.tokens} tokens`);
    assert.equal(e.mentions[0]!.tokens, e.parts.mentions);
    assert.ok(e.mentions[0]!.tokens > 8_000);
  });

  it('sendPrompt with mentions: the model gets the file, the missing one is a warning in the message', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('ok')] });
    t = openai(server);
    const { threadId } = await t.client().call('sendPrompt', {
      threadId: null, prompt: 'what do the notes say?', model: 'openai:gpt-4o-mini',
      mentions: [{ kind: 'file', target: 'notes.md' }, { kind: 'file', target: 'gone.md' }],
    });
    const evs = await events(threadId, ended);
    const sent = server.requests[0]!.body.messages.at(-1).content as string;
    assert.match(sent, /^what do the notes say\?/);
    assert.match(sent, /<context kind="file" label="notes.md">\nThe meter counts tokens.\n\n<\/context>/);
    assert.match(sent, /\[not attached: File not found: gone.md\]/);
    const user = evs.find((e) => e.type === 'message.added' && e.role === 'user')!;
    assert.equal(user.content, sent, 'the thread keeps what the model saw');
    const { prompt, chips } = splitContext(user.content!);
    assert.equal(prompt, 'what do the notes say?');
    assert.deepEqual(chips.map((c) => [c.label, c.status, c.warning]), [['notes.md', 'ok', null], ['gone.md', 'warning', 'File not found: gone.md']]);
  });

  it('Anthropic models are counted by the API\'s count_tokens endpoint; the approximation stands in when it fails', async () => {
    server = await startFakeAnthropic({ responses: [], routes: { '/v1/messages/count_tokens': () => ({ input_tokens: 4321 }) } });
    t = startTestEngine({ dir, host: new TestHost({ secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl } }) });
    const e = await t.client().call('estimateContext', { threadId: null, draft: 'count me', model: 'anthropic:claude-sonnet-4-5', mentions: [{ kind: 'file', target: 'notes.md' }] });
    assert.deepEqual([e.tokens, e.source, e.window, e.fits], [4321, 'provider', 200_000, true]);
    const asked = server.requests.find((r) => r.path === '/v1/messages/count_tokens')!;
    assert.equal(asked.headers['x-api-key'], 'sk-ant-x');
    assert.equal(asked.body.model, 'claude-sonnet-4-5');
    assert.match(JSON.stringify(asked.body.messages), /count me.*The meter counts tokens/);
    assert.ok(Array.isArray(asked.body.tools) && asked.body.tools.length > 0, 'the tool definitions are counted too');
    await t.dispose();
    await server.close();
    server = await startFakeAnthropic({ responses: [] }); // no count_tokens route: 404
    t = startTestEngine({ dir, host: new TestHost({ secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl } }) });
    const fallback = await t.client().call('estimateContext', { threadId: null, draft: 'count me', model: 'anthropic:claude-sonnet-4-5' });
    assert.equal(fallback.source, 'approximation');
    assert.ok(fallback.tokens > 0);
  });

  it('OpenAI finish_reason length: run.ended says stopReason length (and end otherwise)', async () => {
    server = await startFakeOpenAI({ responses: [textTurn(['A reply cut ', 'mid-'], { stopReason: 'length' }), textTurn('whole')] });
    t = openai(server);
    const first = await t.client().call('sendPrompt', { threadId: null, prompt: 'long answer please', model: 'openai:gpt-4o-mini' });
    const evs = await events(first.threadId, ended);
    assert.equal(evs.find((e) => e.type === 'run.ended')!.stopReason, 'length');
    const second = await t.client().call('sendPrompt', { threadId: null, prompt: 'short', model: 'openai:gpt-4o-mini' });
    assert.equal((await events(second.threadId, ended)).find((e) => e.type === 'run.ended')!.stopReason, 'end');
  });

  it('Anthropic stop_reason max_tokens: run.ended says stopReason length', async () => {
    server = await startFakeAnthropic({ responses: [textTurn(['Cut off ', 'here'], { stopReason: 'length' })] });
    t = startTestEngine({ dir, host: new TestHost({ secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl } }) });
    const { threadId } = await t.client().call('sendPrompt', { threadId: null, prompt: 'go', model: 'anthropic:claude-sonnet-4-5' });
    const run = (await events(threadId, ended)).find((e) => e.type === 'run.ended')!;
    assert.equal(run.stopReason, 'length');
  });

  it('Stop keeps the tokens used: the prompt and the streamed text, counted and marked estimated', async () => {
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    server = await startFakeOpenAI({ responses: [textTurn(['Hello there, ', 'streaming on', ' and on'], { holds: [{ afterEvents: 3, release: new Promise(() => undefined), onReached: () => reached() }] })] });
    t = openai(server);
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'stream something', model: 'openai:gpt-4o-mini' });
    await atHold;
    // The text before the hold has reached the engine (not only left the server) before Stop.
    let streamedLive = '';
    c.on('turnChunks', (u) => {
      for (const ch of u.chunks) if (ch.kind === 'text') streamedLive += ch.data;
    });
    await c.call('subscribeTurn', { turnId: runId!, afterSeq: 0, maxDelayMs: 0 });
    await waitFor('the streamed text', 10_000, () => streamedLive === 'Hello there, streaming on', 10);
    const estimate = await c.call('estimateContext', { threadId: null, draft: 'stream something', model: 'openai:gpt-4o-mini' });
    await c.call('cancelRun', { runId: runId! });
    const evs = await events(threadId, ended);
    const run = evs.find((e) => e.type === 'run.ended')!;
    const streamed = evs.find((e) => e.type === 'message.added' && e.role === 'assistant')?.content ?? '';
    assert.equal(streamed, 'Hello there, streaming on', 'the text streamed before the stop is kept');
    assert.equal(run.usage!.estimated, true);
    assert.equal(run.usage!.outputTokens, await countText('o200k_base', streamed));
    // The prompt the run sent is the one a new thread's estimate counts.
    assert.equal(run.usage!.inputTokens, estimate.tokens);
    const summary = (await c.call('getThread', { threadId })).runs[0]!;
    assert.equal(summary.usage.inputTokens, estimate.tokens, 'the runs table keeps them too');
  });
});
