/**
 * The repetition guard in the agent loop (src/engine/guards/install.ts) against the fake OpenAI
 * server (real `openai` SDK over loopback, real SQLite): a model that loops is stopped — the run
 * ends failed with the guard's "stopped: the model repeated itself (…)", the HTTP stream is
 * aborted (the server sees the client close the connection long before the scripted end), and
 * the text that streamed before stays in the thread. A real model that loops — the offline demo
 * model under greedy decoding (llama.cpp) — is stopped too, and so is a looping reasoning channel;
 * a legitimately repetitive answer (a hexdump from the corpus) and a turn whose steps repeat the
 * same words across tool calls complete.
 */
import { turnBus } from '../support/turn-stages';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalGate, ApprovalPolicy } from '../../src/engine/approvals/approval';
import { AgentRunner } from '../../src/engine/agent/runner';
import { installRepetitionGuard } from '../../src/engine/guards/install';
import { RateLimitWaits, systemClock } from '../../src/engine/runs/rate-limit';
import { RunRegistry } from '../../src/engine/runs/registry';
import type { ResolvedModel } from '../../src/engine/providers/types';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { LocalLlamaProvider } from '../../src/engine/providers/local-llama';
import { execFileSync } from 'node:child_process';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry } from '../../src/engine/stream/turn-stream-registry';
import { REPEATED_ITSELF, repetitionDetail } from '../../src/protocol/repetition';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer, type FakeTurn } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** Copies of the looping sentence the fake model would send (far more than the guard lets through). */
const LOOP_COPIES = 400;
/** The server pauses here (an event index well past where the guard trips) until the test has seen the run end. */
const HOLD_AT_EVENT = 300;
/** Generates the offline demo model (a real GGUF bigram model that llama.cpp runs). */
const DEMO_MODEL_SCRIPT = path.resolve(__dirname, '../../scripts/make-demo-model.mjs');
/** Budget for generating the demo model and loading llama.cpp. */
const LOAD_TIMEOUT_MS = 60_000;

describe('repetition guard in the agent loop (fake OpenAI server, real SQLite)', function () {
  this.timeout(20_000);
  let dir: string;
  let ws: string;
  let server: FakeServer | undefined;
  let store: VoxStore;
  let streams: TurnStreamRegistry;
  let uninstall: () => void;

  async function setup(responses: FakeResponse[]) {
    const started = (server = await startFakeOpenAI({ responses }));
    const model: ResolvedModel = {
      provider: new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: started.baseUrl }),
      model: 'gpt-test', label: 'openai:gpt-test', toolsEnabled: true,
    };
    const hooks = turnBus(store);
    uninstall = installRepetitionGuard(hooks);
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate: new ApprovalGate(), tools: builtinToolRegistry(), policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks, waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
    return { runs, model };
  }

  /** Word-sized deltas of `text` (each word with its trailing space), as a hosted model streams them. */
  const words = (text: string) => text.match(/\S+\s*/g) ?? [];

  /** A turn that pauses at HOLD_AT_EVENT until `release`; `reached` says whether the server got there. */
  function held(turn: FakeTurn): { turn: FakeTurn; release: () => void; reached: () => boolean } {
    let release!: () => void;
    let reached = false;
    const gate = new Promise<void>((r) => (release = r));
    return { turn: { ...turn, holds: [{ afterEvents: HOLD_AT_EVENT, release: gate, onReached: () => (reached = true) }] }, release, reached: () => reached };
  }

  beforeEach(() => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'ws'));
    ws = fs.realpathSync(path.join(dir, 'ws'));
    fs.writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
    store = VoxStore.open(path.join(dir, 'vox.db'));
    streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
  });
  afterEach(async () => {
    uninstall?.();
    await server?.close();
    server = undefined;
    store.close();
    removeTmpDir(dir);
  });

  it('stops a looping answer: failed with the guard\'s message, the HTTP stream aborted, the partial text kept', async () => {
    const prefix = 'I looked at the loader. ';
    const sentence = 'Let me check the configuration file again to be sure. ';
    const scripted = words(prefix + sentence.repeat(LOOP_COPIES));
    const h = held(textTurn(scripted, { usage: { inputTokens: 10, outputTokens: 5000 } }));
    const { runs, model } = await setup([h.turn]);
    const result = await runs.start({ prompt: 'why does the build fail?', model }).done;

    assert.equal(result.status, 'failed');
    assert.ok(result.error?.startsWith(REPEATED_ITSELF), result.error ?? '');
    assert.match(repetitionDetail(result.error) ?? '', /^a cycle of \d+ tokens, \d+ times in a row$/);
    const run = store.runs(result.threadId)[0]!;
    assert.equal(run.status, 'failed');
    assert.equal(run.error, result.error, 'run.ended carries the same text');

    // The stream was aborted: the client closed the connection while the server still had most of the script to send.
    const rec = server!.requests[0]!;
    await waitFor('the server to see the client close the stream', 5_000, () => rec.stream?.clientClosed);
    h.release();
    assert.ok(rec.stream!.written < rec.stream!.total / 2, `${rec.stream!.written} of ${rec.stream!.total} events written`);
    assert.ok(rec.stream!.written <= HOLD_AT_EVENT);

    // The text before the loop and its first copies are kept, as a failed answer; nothing after the trip.
    const last = store.activePath(result.threadId).at(-1)!;
    assert.equal(last.role, 'assistant');
    assert.equal(last.status, 'failed');
    assert.equal(last.content, result.text);
    assert.ok(last.content.startsWith(prefix + sentence + sentence), last.content);
    assert.ok((prefix + sentence.repeat(LOOP_COPIES)).startsWith(last.content), 'a prefix of what the model sent');
    assert.ok(last.content.length < prefix.length + 2 * sentence.length + 400, `${last.content.length} characters kept`);
    const streamedText = store.chunksAfter(result.runId, 0).filter((c) => c.kind === 'text').map((c) => c.data).join('');
    assert.equal(streamedText, last.content, 'the live stream showed exactly the kept text');
  });

  it('stops a looping reasoning channel too', async () => {
    const h = held({ kind: 'turn', reasoning: words('The user wants a fix. ' + 'Wait, maybe I should reconsider the approach. '.repeat(LOOP_COPIES)), text: ['never shown'], reasoningField: 'reasoning_content' });
    const { runs, model } = await setup([h.turn]);
    const result = await runs.start({ prompt: 'fix it', model }).done;
    assert.equal(result.status, 'failed');
    assert.ok(result.error?.startsWith(REPEATED_ITSELF), result.error ?? '');
    await waitFor('the server to see the client close the stream', 5_000, () => server!.requests[0]!.stream?.clientClosed);
    h.release();
    const reasoning = store.chunksAfter(result.runId, 0).filter((c) => c.kind === 'reasoning').map((c) => c.data).join('');
    assert.ok(reasoning.startsWith('The user wants a fix. Wait, maybe'), reasoning);
    assert.equal(result.text, '', 'no answer text streamed');
  });

  it('stops a real looping model: the greedy demo model (llama.cpp) stuck on "the the the"', async function () {
    this.timeout(LOAD_TIMEOUT_MS + 30_000);
    const modelPath = path.join(dir, 'vox-demo.gguf');
    execFileSync(process.execPath, [DEMO_MODEL_SCRIPT, modelPath], { stdio: 'pipe' });
    const provider = new LocalLlamaProvider({ threads: 1, demoModelPath: modelPath });
    try {
      const hooks = turnBus(store);
      uninstall = installRepetitionGuard(hooks);
      const policy = new ApprovalPolicy();
      const agent = new AgentRunner({ store, streams, gate: new ApprovalGate(), tools: builtinToolRegistry(), policy: () => policy });
      const runs = new RunRegistry({ store, streams, runner: agent, hooks, waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
      const model: ResolvedModel = { provider, model: modelPath, label: 'local:demo', toolsEnabled: false };
      // Greedy decoding (temperature 0): a bigram model falls into its likeliest cycle and stays there.
      const result = await runs.start({ prompt: 'hello', model, sampling: { temperature: 0, topP: null, reasoningEffort: null } }).done;
      assert.equal(result.status, 'failed', result.error ?? '');
      assert.ok(result.error?.startsWith(REPEATED_ITSELF), result.error ?? '');
      assert.match(result.text, /(the ){8}/, result.text);
      // Stopped long before the provider's reply cap (local-llama.ts's DEFAULT_MAX_TOKENS, 1,024 tokens: ~4,000 characters of "the "): a few hundred characters.
      assert.ok(result.text.length < 400, `${result.text.length} characters`);
      assert.equal(store.activePath(result.threadId).at(-1)!.content, result.text);
    } finally {
      await provider.dispose();
    }
  });

  it('lets a legitimately repetitive answer (a hexdump with zero runs) and steps that repeat across tool calls complete', async () => {
    const hexdump = fs.readFileSync(path.resolve(__dirname, '../fixtures/repetition/legit/xxd.txt'), 'utf8');
    const again = 'the '.repeat(30);
    const { runs, model } = await setup([
      textTurn(words(hexdump)),
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }], { text: words(again) }),
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }], { text: words(again) }),
      textTurn(words(again)),
    ]);
    const first = await runs.start({ prompt: 'dump /bin/true', model }).done;
    assert.equal(first.status, 'completed', first.error ?? '');
    assert.equal(first.text, hexdump);
    assert.equal(server!.requests[0]!.stream!.clientClosed, false);
    // 30 + 30 + 30 "the" in one turn: 90 in a row would be a loop in one stream, but each model call has its own guard.
    const second = await runs.start({ prompt: 'read a.txt twice', model, threadId: first.threadId }).done;
    assert.equal(second.status, 'completed', second.error ?? '');
  });
});
