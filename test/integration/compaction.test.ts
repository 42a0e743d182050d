/**
 * Partial compaction (SPEC 3.7) over the protocol on a real engine: a real SQLite file seeded with
 * a 500-message thread, the official OpenAI SDK against the loopback fake server. Checks exactly
 * which messages the next request carries after `upTo` and `from` compactions, that the raw
 * messages stay byte for byte in SQLite, what a later compaction over an earlier one does, that a
 * model answering without the summary shape writes nothing, that a running thread is refused,
 * and that automatic compaction keeps a long thread working under a small (8,192-token) window.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { VoxStore } from '../../src/engine/store/store';
import { OPENAI_REPLY_PRIMING_TOKENS, OPENAI_TOKENS_PER_MESSAGE, countText } from '../../src/engine/providers/token-count';
import { summaryMessageText } from '../../src/protocol/compaction';
import { ClientError } from '../../src/client/engine-client';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

export const VALID_SUMMARY = [
  '## Goal', 'Keep the parser fast.', '', '## Decisions', '- Use a table-driven lexer.', '', '## Files touched', '- src/lexer.ts: rewritten', '', '## Open items', 'None.',
].join('\n');

/** Seeds `n` messages (user/assistant alternating, one chain) into a new thread; returns their ids and contents. */
function seedThread(dbPath: string, threadId: string, n: number, text: (i: number) => string = (i) => `message ${i} ${i % 2 === 0 ? 'question' : 'answer'}`): { ids: string[]; contents: string[] } {
  const s = VoxStore.open(dbPath);
  try {
    const ids: string[] = [];
    const contents: string[] = [];
    const events: Parameters<VoxStore['append']> = [{ type: 'thread.created', threadId, title: 'long' }];
    for (let i = 0; i < n; i++) {
      const id = `msg:seed${String(i).padStart(4, '0')}`;
      events.push({ type: 'message.added', threadId, messageId: id, parentId: i === 0 ? null : ids[i - 1]!, role: i % 2 === 0 ? 'user' : 'assistant', content: text(i), runId: null, status: 'complete' });
      ids.push(id);
      contents.push(text(i));
    }
    s.append(...events);
    return { ids, contents };
  } finally {
    s.close();
  }
}

function rawMessages(dbPath: string): unknown[] {
  const s = VoxStore.open(dbPath);
  try {
    return s.db.prepare('SELECT id, parent_id, role, content, run_id, status, created_at, edited_at FROM messages ORDER BY rowid').all();
  } finally {
    s.close();
  }
}

type Wire = { role: string; content: string | null; tool_calls?: Array<{ id: string; extra_content?: { google?: { thought_signature?: string } } }> };

describe('compaction: partial and automatic, over the protocol', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  const start = (s: FakeServer, model = 'openai:gpt-4o') =>
    startTestEngine({ dir, host: new TestHost({ model, secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: s.baseUrl } }) });

  async function runToEnd(threadId: string, prompt: string): Promise<string> {
    const { runId } = await t!.client().call('sendPrompt', { threadId, prompt });
    await waitFor('run end', 60_000, async () => {
      const th = await t!.client().call('getThread', { threadId });
      return th.runs.find((r) => r.id === runId && r.status !== 'running');
    }, 20);
    return runId!;
  }

  const lastRequest = () => server!.requests.at(-1)!.body.messages as Wire[];

  it('upTo on a 500-message thread: the next request is the system prompt, the summary, the messages after it and the prompt', async () => {
    server = await startFakeOpenAI({ responses: [textTurn(VALID_SUMMARY), textTurn('ok')] });
    t = start(server);
    const { ids, contents } = seedThread(t.dbPath, 'thr:long', 500);
    const before = rawMessages(t.dbPath);
    const c = await t.client().call('compactThread', { threadId: 'thr:long', mode: 'upTo', messageId: ids[479]! });
    assert.equal(c.mode, 'upTo');
    assert.equal(c.fromMessageId, ids[0]);
    assert.equal(c.upToMessageId, ids[479]);
    assert.equal(c.compactMessageIndex, 479);
    assert.equal(c.coveredMessages, 480);
    assert.equal(c.summary, VALID_SUMMARY);
    assert.equal(c.model, 'openai:gpt-4o');
    // The summariser saw the covered messages (the last two of them at least: the transcript is bounded) and none after.
    const asked = JSON.stringify(server.requests[0]!.body.messages);
    assert.ok(asked.includes(contents[479]!) && asked.includes(contents[478]!));
    assert.ok(!asked.includes(contents[480]!));
    assert.deepEqual(server.requests[0]!.body.tools, undefined);
    assert.deepEqual(rawMessages(t.dbPath), before, 'the raw messages are unchanged in SQLite');

    await runToEnd('thr:long', 'next step');
    const sent = lastRequest();
    assert.equal(sent[0]!.role, 'system');
    assert.deepEqual(sent.slice(1).map((m) => [m.role, m.content]), [
      ['user', summaryMessageText(VALID_SUMMARY, 480)],
      ...contents.slice(480).map((x, k) => [(480 + k) % 2 === 0 ? 'user' : 'assistant', x]),
      ['user', 'next step'],
    ]);
    // The meter counts the same history (one summary, not 480 messages).
    const est = await t.client().call('estimateContext', { threadId: 'thr:long', draft: '' });
    assert.ok(est.parts.history > 0);
  });

  it('from on a 500-message thread: earlier messages (up to the history limit), then the summary, then the prompt', async () => {
    server = await startFakeOpenAI({ responses: [textTurn(VALID_SUMMARY), textTurn('ok')] });
    t = start(server);
    const { ids, contents } = seedThread(t.dbPath, 'thr:long', 500);
    const before = rawMessages(t.dbPath);
    const c = await t.client().call('compactThread', { threadId: 'thr:long', mode: 'from', messageId: ids[450]! });
    assert.deepEqual([c.fromMessageId, c.upToMessageId, c.compactMessageIndex, c.coveredMessages], [ids[450], ids[499], 499, 50]);
    assert.deepEqual(rawMessages(t.dbPath), before);
    await runToEnd('thr:long', 'go on');
    const sent = lastRequest();
    // 40 history units: messages 412…449, the summary, the prompt.
    assert.deepEqual(sent.slice(1).map((m) => [m.role, m.content]), [
      ...contents.slice(412, 450).map((x, k) => [(412 + k) % 2 === 0 ? 'user' : 'assistant', x]),
      ['user', summaryMessageText(VALID_SUMMARY, 50)],
      ['user', 'go on'],
    ]);
  });

  it('a later compaction that cuts an earlier one takes it whole and supersedes it; the summariser reads the earlier summary', async () => {
    const second = VALID_SUMMARY.replace('Keep the parser fast.', 'Keep the parser fast, all of it.');
    server = await startFakeOpenAI({ responses: [textTurn(VALID_SUMMARY), textTurn(second), textTurn('ok')] });
    t = start(server);
    const { ids, contents } = seedThread(t.dbPath, 'thr:long', 500);
    const first = await t.client().call('compactThread', { threadId: 'thr:long', mode: 'from', messageId: ids[100]! });
    const later = await t.client().call('compactThread', { threadId: 'thr:long', mode: 'upTo', messageId: ids[200]! });
    assert.deepEqual([later.fromMessageId, later.upToMessageId, later.coveredMessages], [ids[0], ids[499], 500], 'widened to the whole earlier range');
    assert.deepEqual(later.supersedes, [first.compactionId]);
    const asked = JSON.stringify(server.requests[1]!.body.messages);
    assert.ok(asked.includes('Earlier summary (400 messages)') && asked.includes(contents[99]!) && !asked.includes(contents[150]!));
    const list = await t.client().call('listCompactions', { threadId: 'thr:long' });
    assert.deepEqual(list.compactions.map((x) => [x.compactionId, x.active]), [[first.compactionId, false], [later.compactionId, true]]);
    await runToEnd('thr:long', 'and now');
    assert.deepEqual(lastRequest().slice(1).map((m) => m.content), [summaryMessageText(second, 500), 'and now']);
    await assert.rejects(t.client().call('compactThread', { threadId: 'thr:long', mode: 'upTo', messageId: ids[499]! }), (e: unknown) => e instanceof ClientError && e.code === 'nothingToCompact');
  });

  it('a model that does not answer with the summary shape: compaction/invalidSummary, nothing written', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('Sure! The conversation was about parsers.'), textTurn('## Goal\nx\n## Decisions\n\n## Files touched\ny\n## Open items\nz')] });
    t = start(server);
    const { ids } = seedThread(t.dbPath, 'thr:g', 10);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(t.client().call('compactThread', { threadId: 'thr:g', mode: 'upTo', messageId: ids[5]! }), (e: unknown) => {
        assert.ok(e instanceof ClientError && e.domain === 'compaction' && e.code === 'invalidSummary', String(e));
        return true;
      });
    }
    const s = VoxStore.open(t.dbPath);
    try {
      assert.equal(s.compactions('thr:g').length, 0);
      assert.equal(s.eventsAfter(0, { threadId: 'thr:g' }).filter((e) => e.type === 'thread.compacted').length, 0);
    } finally {
      s.close();
    }
    await assert.rejects(t.client().call('compactThread', { threadId: 'thr:g', mode: 'upTo' }), (e: unknown) => e instanceof ClientError && e.code === 'badTarget');
    await assert.rejects(t.client().call('compactThread', { threadId: 'thr:g', mode: 'from', messageId: 'msg:nope' }), (e: unknown) => e instanceof ClientError && e.code === 'unknownMessage');
  });

  it('compacting a running thread is refused with run/threadBusy', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    server = await startFakeOpenAI({ responses: [textTurn(['a', 'b', 'c'], { holds: [{ afterEvents: 2, onReached: () => reached(), release: released }] })] });
    t = start(server);
    seedThread(t.dbPath, 'thr:busy', 4);
    const { runId } = await t.client().call('sendPrompt', { threadId: 'thr:busy', prompt: 'hold on' });
    await atHold;
    await assert.rejects(t.client().call('compactThread', { threadId: 'thr:busy', mode: 'full' }), (e: unknown) => {
      assert.ok(e instanceof ClientError && e.domain === 'run' && e.code === 'threadBusy', String(e));
      return true;
    });
    release();
    await waitFor('run end', 30_000, async () => (await t!.client().call('getThread', { threadId: 'thr:busy' })).runs.find((r) => r.id === runId && r.status !== 'running'), 20);
    assert.equal(server.requests.length, 1, 'no summary was asked for');
  });

  it('automatic compaction under an 8,192-token window: the request stays under it, the run works past it, tool calls keep their thought signatures', async () => {
    // gpt-4's window is 8,192 tokens (providers/context-windows.ts); 60 messages of ~300 tokens each are far past it.
    const signature = Buffer.from(Array.from({ length: 48 }, (_, i) => (i * 73 + 11) % 256)).toString('base64') + '·签名✓';
    server = await startFakeOpenAI({
      responses: [
        textTurn(VALID_SUMMARY),
        toolCallTurn([{ name: 'list_files', args: { path: '.' }, thoughtSignature: signature }]),
        textTurn('done'),
      ],
    });
    t = start(server, 'openai:gpt-4');
    const filler = (i: number) => `message ${i}: ` + Array.from({ length: 220 }, (_, k) => `w${(i * 7 + k) % 97}`).join(' ');
    const { ids, contents } = seedThread(t.dbPath, 'thr:auto', 60, filler);
    const est = await t.client().call('estimateContext', { threadId: 'thr:auto', draft: 'continue' });
    assert.equal(est.window, 8_192);
    assert.ok(est.tokens > 8_192, `the thread alone is over the window (${est.tokens})`);
    const before = rawMessages(t.dbPath);
    const runId = await runToEnd('thr:auto', 'continue');
    const th = await t.client().call('getThread', { threadId: 'thr:auto' });
    assert.equal(th.runs.find((r) => r.id === runId)!.status, 'completed');
    // The thread is over the window before the first call: the summary request comes first, then the turn's two calls.
    assert.equal(server.requests.length, 3);
    const [summariser, firstCall, secondCall] = server.requests.map((r) => r.body.messages as Wire[]) as [Wire[], Wire[], Wire[]];
    assert.ok(JSON.stringify(summariser).includes('You compact a conversation'));
    for (const [i, call] of [firstCall, secondCall].entries()) {
      // cl100k_base with OpenAI's framing, as the meter counts it; the tool definitions count too.
      let tokens = OPENAI_REPLY_PRIMING_TOKENS + (await countText('cl100k_base', JSON.stringify(server.requests[i + 1]!.body.tools ?? [])));
      for (const m of call) tokens += OPENAI_TOKENS_PER_MESSAGE + (await countText('cl100k_base', `${m.content ?? ''}${JSON.stringify(m.tool_calls ?? '')}`));
      assert.ok(tokens < 8_192 * 0.9, `call ${i + 1} was ${tokens} tokens`);
    }
    assert.deepEqual(firstCall.slice(1).map((m) => m.content), secondCall.slice(1, firstCall.length).map((m) => m.content), 'the second call keeps the first\'s history');
    const s = VoxStore.open(t.dbPath);
    try {
      const [cmp] = s.compactions('thr:auto');
      assert.ok(cmp, 'a compaction was written');
      assert.equal(cmp.trigger, 'auto');
      assert.equal(cmp.runId, runId);
      assert.equal(cmp.fromMessageId, ids[0]);
      const kept = ids.indexOf(cmp.upToMessageId) + 1;
      assert.ok(kept > 0 && kept < 60 && kept % 2 === 0, `compacted up to a whole turn (${kept})`);
      // The rewritten request: system, summary, the kept messages verbatim, the prompt, this turn's tool call and result.
      assert.deepEqual(secondCall.slice(1, 2 + (60 - kept)).map((m) => m.content), [summaryMessageText(VALID_SUMMARY, kept), ...contents.slice(kept)]);
      assert.equal(secondCall[2 + 60 - kept]!.content, 'continue');
      const call = secondCall.find((m) => m.tool_calls)!;
      assert.equal(call.tool_calls![0]!.extra_content?.google?.thought_signature, signature, 'the signature goes back byte for byte');
      const item = s.items(runId).find((i) => i.kind === 'toolCall')!;
      assert.equal(item.thoughtSignature, signature, 'and is stored with the call');
      assert.deepEqual(s.db.prepare('SELECT id, parent_id, role, content, run_id, status, created_at, edited_at FROM messages ORDER BY rowid').all().slice(0, 60), before);
    } finally {
      s.close();
    }
    const after = await t.client().call('estimateContext', { threadId: 'thr:auto', draft: '' });
    assert.ok(after.tokens < 8_192, `after compaction the thread fits (${after.tokens})`);
  });

  it('a failed automatic compaction is shown in the status line and reported; the turn goes on and does not try again', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('I would rather not.'), toolCallTurn([{ name: 'list_files', args: { path: '.' } }]), textTurn('done')] });
    t = start(server, 'openai:gpt-4');
    const filler = (i: number) => `message ${i}: ` + Array.from({ length: 220 }, (_, k) => `w${(i * 7 + k) % 97}`).join(' ');
    seedThread(t.dbPath, 'thr:fail', 60, filler);
    const runId = await runToEnd('thr:fail', 'continue');
    assert.equal(server.requests.length, 3, 'one summary request, then the two calls of the turn');
    const s = VoxStore.open(t.dbPath);
    try {
      assert.equal(s.run(runId)!.status, 'completed');
      assert.equal(s.compactions('thr:fail').length, 0);
      const status = s.chunksAfter(runId, 0).filter((c) => c.kind === 'status').map((c) => c.data);
      assert.ok(status.some((x) => x.startsWith('Compacting the conversation')), JSON.stringify(status));
      assert.ok(status.some((x) => x.startsWith('Automatic compaction failed:') && x.includes('did not answer with a summary')), JSON.stringify(status));
    } finally {
      s.close();
    }
    assert.ok(t.host.notices.some((n) => n.source === 'compaction' && n.message.includes('Automatic compaction of thread thr:fail failed')));
  });
});
