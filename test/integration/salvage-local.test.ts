/**
 * SPEC 3.2 with the local provider (real llama.cpp through node-llama-cpp, the generated demo
 * GGUF): the demo model has no native tools (`toolsEnabled: false`, as providers/builtins.ts
 * resolves it), so the agent loop tells it the fence syntax and salvages its text. A bigram model
 * cannot be made to write a fenced block (its greedy output after the chat template is fixed), so
 * this checks (1) the real model's turn carries the syntax and its real output passes the salvage
 * untouched, and (2) the local provider's grammar path: a `{"type":"message"}` reply whose text
 * holds a ```tool: block, decoded by the provider's own parser (MessageTextStreamer,
 * parseToolReply), becomes a call.
 */
import { turnBus } from '../support/turn-stages';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalGate, ApprovalPolicy } from '../../src/engine/approvals/approval';
import { AgentRunner } from '../../src/engine/agent/runner';
import { RateLimitWaits, systemClock } from '../../src/engine/runs/rate-limit';
import { RunRegistry } from '../../src/engine/runs/registry';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { LocalLlamaProvider } from '../../src/engine/providers/local-llama';
import { MessageTextStreamer, parseToolReply } from '../../src/engine/providers/local-llama-tools';
import type { ModelProvider, StreamRequest } from '../../src/engine/providers/types';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry } from '../../src/engine/stream/turn-stream-registry';
import { salvageToolCalls } from '../../src/engine/salvage/fenced-calls';
import { TurnSalvage } from '../../src/engine/salvage/turn-salvage';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const SCRIPT = path.resolve(__dirname, '../../scripts/make-demo-model.mjs');
/** Budget for generating the model and loading llama.cpp. */
const LOAD_TIMEOUT_MS = 60_000;

describe('salvage with the local provider (demo GGUF, real llama.cpp)', function () {
  this.timeout(LOAD_TIMEOUT_MS);
  let dir: string;
  let modelPath: string;
  let local: LocalLlamaProvider;

  before(async () => {
    dir = makeTmpDir();
    modelPath = path.join(dir, 'vox-demo.gguf');
    execFileSync(process.execPath, [SCRIPT, modelPath], { stdio: 'pipe' });
    local = new LocalLlamaProvider({ threads: 1, demoModelPath: modelPath, seed: 7 });
    await local.load(modelPath);
  });
  after(async () => {
    await local?.dispose();
    removeTmpDir(dir);
  });

  it('the demo model is told the fence syntax; its real reply passes the salvage unchanged', async () => {
    fs.mkdirSync(path.join(dir, 'ws'), { recursive: true });
    const store = VoxStore.open(path.join(dir, 'vox.db'));
    try {
      const seen: StreamRequest[] = [];
      // The real provider; the test only records what the loop asked of it.
      const recording: ModelProvider = { id: local.id, isLocal: true, stream: (req) => (seen.push(req), local.stream({ ...req, maxTokens: 60 })) };
      const streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
      const policy = new ApprovalPolicy();
      const agent = new AgentRunner({ store, streams, gate: new ApprovalGate(), tools: builtinToolRegistry(), policy: () => policy });
      const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: fs.realpathSync(path.join(dir, 'ws')) });
      const result = await runs.start({ prompt: 'hello', model: { provider: recording, model: modelPath, label: 'local:demo', toolsEnabled: false }, sampling: { temperature: 0 } }).done;
      assert.equal(result.status, 'completed', result.error ?? '');
      assert.equal(seen[0]!.tools?.length ?? 0, 0, 'no native tools for the demo model');
      assert.match(seen[0]!.messages[0]!.content, /```tool:read_file/);
      assert.match(seen[0]!.messages[0]!.content, /read_file\(path/);
      // The bigram writes no blocks and no refusal: one call, its text is the answer as streamed.
      assert.equal(seen.length, 1);
      const streamed = store.chunksAfter(result.runId, 0).filter((c) => c.kind === 'text').map((c) => c.data).join('');
      assert.ok(streamed.length > 0);
      assert.equal(result.text, streamed);
      assert.deepEqual(salvageToolCalls(streamed, ['read_file']).calls, []);
      assert.deepEqual(new TurnSalvage(builtinToolRegistry().list(), false).review(streamed, []), { kind: 'keep' });
    } finally {
      store.close();
    }
  });

  it('the grammar path: a message reply holding a ```tool: block, decoded by the local parser, is salvaged', () => {
    const text = 'Reading it.\n```tool:read_file path=a.txt\n```';
    const raw = JSON.stringify({ type: 'message', text });
    // Decoded as the provider streams it (in small pieces), and as it parses the final object.
    const streamer = new MessageTextStreamer();
    let live = '';
    for (let i = 0; i < raw.length; i += 3) live += streamer.push(raw.slice(i, i + 3));
    assert.equal(live, text);
    const reply = parseToolReply(raw, [{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }]);
    assert.deepEqual(reply, { kind: 'message', text });
    const tools = builtinToolRegistry().list();
    const review = new TurnSalvage(tools, true).review(live, []);
    assert.equal(review.kind, 'salvaged');
    assert.ok(review.kind === 'salvaged');
    assert.deepEqual(review.calls.map((c) => [c.name, c.argumentsJson]), [['read_file', '{"path":"a.txt"}']]);
    assert.equal(review.displayText, 'Reading it.');
    // The protocol's tool_call object written as plain text (a local model without the grammar) is an envelope too.
    const plain = salvageToolCalls('{"type": "tool_call", "name": "read_file", "arguments": {"path": "a.txt"}}', ['read_file']);
    assert.deepEqual(plain.calls.map((c) => c.argumentsJson), ['{"path":"a.txt"}']);
  });
});
