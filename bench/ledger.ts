/**
 * Benchmark: what the cost ledger adds to a turn, on a real SQLite file (SPEC 3.4). Not a test:
 * no asserts. Run: `npm run bench:ledger` (`node --import=tsx bench/ledger.ts [--turns 2000]`).
 *
 *   receipt        recordReceipt: the post-stream write (receipt, usage transaction, balance,
 *                  daily summary, observed cost) in one IMMEDIATE transaction, per response
 *   baseline       store.append of one `message.added`: the write every turn already does
 *   gate           the pre-flight gate's whole cost before a request: the prompt counted with the
 *                  model's tokenizer, the card found, the balance and caps checked
 *   gate/check     of that, the card, balance and caps only (the prompt count is what compaction
 *                  also spends before each call)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setDefaultStoreSchemas } from '../src/engine/store/schema';
import { STORE_SCHEMAS } from '../src/engine/modules';
import { VoxStore } from '../src/engine/store/store';
import { grant, recordReceipt, setCap, setUserPrice } from '../src/engine/ledger/writes';
import { resolveCard, ratesToWire } from '../src/engine/ledger/catalog';
import { checkCall, estimateCall } from '../src/engine/ledger/gate';
import { countPrompt } from '../src/engine/providers/token-count';
import type { ChatMessage, ResolvedModel } from '../src/engine/providers/types';

setDefaultStoreSchemas(STORE_SCHEMAS);

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const TURNS = arg('turns', 2_000);
/** The prompt the gate counts: a system prompt and 20 messages of about 2 KB (a mid-sized thread). */
const PROMPT_MESSAGES = 20;
const MESSAGE_CHARS = 2_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-ledger-'));
  const store = VoxStore.open(path.join(dir, 'vox.db'));
  try {
    store.append({ type: 'thread.created', threadId: 'thread:b', title: 'bench' });
    grant(store, { kind: 'purchase', amountMicroUsd: 1_000_000_000, note: null });
    setCap(store, { scope: 'daily', threadId: null, capMicroUsd: 900_000_000, action: 'block' });
    setCap(store, { scope: 'run', threadId: null, capMicroUsd: 900_000_000, action: 'warn' });
    setUserPrice(store, 'gpt-bench', ratesToWire({ input: 2_500_000n, output: 10_000_000n, cacheRead: 1_250_000n, cacheWrite5m: 2_500_000n, cacheWrite1h: 2_500_000n }));

    const receipt: number[] = [];
    const baseline: number[] = [];
    const tokens = { input: 1_000, cacheRead: 200, cacheWrite5m: 0, cacheWrite1h: 0, output: 300, reasoning: 100 };
    for (let i = 0; i < TURNS; i++) {
      let t0 = performance.now();
      recordReceipt(store, { threadId: 'thread:b', runId: `run:${i % 50}`, responseId: `resp-${i}`, model: 'openai:gpt-bench', tokens, costMicroUsd: 5_750, costSource: 'priced', card: null, premiums: [], pricedMicroUsd: null });
      receipt.push(performance.now() - t0);
      t0 = performance.now();
      store.append({ type: 'message.added', threadId: 'thread:b', messageId: `msg:${i}`, parentId: null, role: 'assistant', content: 'an answer of a few words', runId: null, status: 'complete' });
      baseline.push(performance.now() - t0);
    }

    const model = { provider: { id: 'openai', isLocal: false }, model: 'gpt-4o', label: 'openai:gpt-bench', toolsEnabled: true } as unknown as ResolvedModel;
    const words = 'the quick brown fox reads a file and writes a test for it ';
    const messages: ChatMessage[] = [{ role: 'system', content: 'You are Vox.' }];
    for (let i = 0; i < PROMPT_MESSAGES; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `${i} ${words.repeat(Math.ceil(MESSAGE_CHARS / words.length))}`.slice(0, MESSAGE_CHARS) });
    await countPrompt(model, messages); // the tokenizer loads once
    const gate: number[] = [];
    const check: number[] = [];
    for (let i = 0; i < 200; i++) {
      let t0 = performance.now();
      const { tokens: prompt } = await countPrompt(model, messages);
      const card = resolveCard(store.db, model.label, model.model)!;
      checkCall(store.db, { threadId: 'thread:b', runId: 'run:1', model: model.label, estimate: estimateCall(card, prompt, 0) });
      gate.push(performance.now() - t0);
      t0 = performance.now();
      const c2 = resolveCard(store.db, model.label, model.model)!;
      checkCall(store.db, { threadId: 'thread:b', runId: 'run:1', model: model.label, estimate: estimateCall(c2, prompt, 0) });
      check.push(performance.now() - t0);
    }
    const r = median(receipt);
    const b = median(baseline);
    console.log(`ledger, ${TURNS} turns on one database (medians)`);
    console.log(`post-stream write   receipt ${(r * 1000).toFixed(0).padStart(5)} µs   baseline message append ${(b * 1000).toFixed(0).padStart(5)} µs   ratio ${(r / b).toFixed(2)}×   (goal < 1 ms)`);
    const g = median(gate);
    const c = median(check);
    console.log(`pre-flight gate     whole ${(g * 1000).toFixed(0).padStart(5)} µs   of it card+balance+caps ${(c * 1000).toFixed(0).padStart(5)} µs   ratio ${(g / c).toFixed(2)}×   (goal < 2 ms; prompt ${PROMPT_MESSAGES} × ${MESSAGE_CHARS} chars)`);
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
