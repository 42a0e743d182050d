/**
 * The cost ledger end to end, as real processes on one database with the fake OpenAI server:
 *   - a paid turn: `vox usage --json` shows the hand-computed micro-dollars (uncached input, cache
 *     reads and output priced apart; reasoning inside output, not added) from the user's card;
 *   - the pre-flight gate: a balance too short for the call refuses it with
 *     `LedgerError (insufficientBattery)`, exit 1, and the server sees no request; a block cap the
 *     same (`capReached`); with no grant and no cap nothing is refused;
 *   - a model no card prices is recorded `unpriced` (no cost, never $0) and not charged;
 *   - bad input: an unknown --kind, a negative amount (exit 2);
 *   - caps at the right step of a scripted two-call turn: a `warn` run cap tells at 50 % after the
 *     first call and at 100 % after the second, and the turn goes on; a `block` run cap refuses
 *     the second call of the turn (after the tool ran), with no request for it;
 *   - concurrency: ten processes recording five receipts and one grant each at once: 50 rows,
 *     balance = grants − Σ usage exactly.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { recordReceipt } from '../../src/engine/ledger/writes';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import * as fs from 'node:fs';
import { REPO_ROOT, runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import type { UsageReport } from '../../src/protocol/commands/ledger';

const CHILD = path.join(REPO_ROOT, 'test/support/ledger-child.ts');

function child(spec: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(spec)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${err}`))));
  });
}

describe('the cost ledger (real processes, fake OpenAI)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: FakeServer | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  it('prices a paid turn exactly, refuses a call the balance or a cap cannot cover before any request, records an unpriced model as unknown', async () => {
    // 1,200 prompt tokens of which 200 cached; 300 output of which 100 reasoning.
    const usage = { inputTokens: 1200, cacheReadTokens: 200, outputTokens: 300, reasoningTokens: 100 };
    server = await startFakeOpenAI({ responses: [textTurn('priced answer', { usage }), textTurn('unpriced answer', { usage }), textTurn('never sent')] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-test' };
    const vox = (...args: string[]) => runVox([...args, '--cwd', dir], env);

    const price = await vox('prices', 'set', 'gpt-test', '--input', '2.5', '--output', '10', '--cache-read', '1.25', '--json');
    assert.equal(price.code, 0, price.err);
    assert.equal(JSON.parse(price.out).card.source, 'user');

    const chat = await vox('chat', 'hello');
    assert.equal(chat.code, 0, chat.err);
    // 1,000 uncached × $2.50/M = 2,500 µ$; 200 cache reads × $1.25/M = 250 µ$; 300 output × $10/M = 3,000 µ$.
    const expected = 2_500 + 250 + 3_000;
    const usageOut = await vox('usage', '--json');
    assert.equal(usageOut.code, 0, usageOut.err);
    const r = JSON.parse(usageOut.out) as UsageReport;
    assert.equal(r.todayMicroUsd, expected);
    assert.equal(r.balanceMicroUsd, -expected);
    assert.equal(r.balanceEnforced, false);
    assert.deepEqual(r.byModel.map((m) => [m.model, m.costMicroUsd, m.tokens.input, m.tokens.cacheRead, m.tokens.output, m.tokens.reasoning]), [['openai:gpt-test', expected, 1000, 200, 300, 100]]);
    assert.deepEqual(r.transactions.map((t) => [t.kind, t.amountMicroUsd, t.balanceAfterMicroUsd]), [['usage', -expected, -expected]]);
    // The thread's cost, run by run.
    const threadId = r.byThread[0]!.threadId;
    const costs = await vox('costs', threadId, '--json');
    assert.equal(costs.code, 0, costs.err);
    const c = JSON.parse(costs.out) as { threadId: string; costMicroUsd: number; runs: Array<{ costMicroUsd: number; sources: string[]; cards: Array<{ source: string }> }> };
    assert.deepEqual([c.threadId, c.costMicroUsd, c.runs.length, c.runs[0]!.sources, c.runs[0]!.cards[0]!.source], [threadId, expected, 1, ['priced'], 'user']);
    const costsText = await vox('costs', threadId);
    assert.match(costsText.out, /\$0\.005750 over 1 response\(s\)[\s\S]*1000 in \/ 200 cache read \/ 0 cache write \/ 300 out +\(priced; card gpt-test user/);
    const noThread = await vox('costs', 'thread:nope');
    assert.equal(noThread.code, 1);
    assert.match(noThread.err, /unknownThread|does not exist/);

    // A model no card prices: recorded, unknown, not charged.
    const unpriced = await runVox(['chat', 'hi again', '--model', 'openai:no-card-model', '--cwd', dir], env);
    assert.equal(unpriced.code, 0, unpriced.err);
    const r2 = JSON.parse((await vox('usage', '--json')).out) as UsageReport;
    const row = r2.byModel.find((m) => m.model === 'openai:no-card-model')!;
    assert.deepEqual([row.responses, row.unpricedResponses, row.costMicroUsd], [1, 1, 0]);
    assert.equal(r2.balanceMicroUsd, -expected, 'an unpriced response is not charged');

    // Bad input: exit 2 before anything opens.
    assert.equal((await vox('budget', 'grant', '5', '--kind', 'gift')).code, 2);
    assert.equal((await vox('budget', 'grant', '-5', '--kind', 'bonus')).code, 2);

    // A grant that leaves 1 BU: the next call (up to 8,192 output tokens at $10/M alone is 81,920 µ$) is refused unsent.
    const grant = await vox('budget', 'grant', String((expected + 1_000) / 1_000), '--kind', 'purchase', '--json');
    assert.equal(grant.code, 0, grant.err);
    assert.equal(JSON.parse(grant.out).balanceMicroUsd, 1_000);
    const before = server.requests.length;
    const refused = await vox('chat', 'this one costs too much');
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.err, /LedgerError \(insufficientBattery\)|Insufficient battery/);
    assert.match(refused.err, /nothing was sent/);
    assert.equal(server.requests.length, before, 'no request reached the server');
    // The unpriced model cannot be checked once a balance is enforced: refused too, unsent.
    const unchecked = await runVox(['chat', 'unpriced now', '--model', 'openai:no-card-model', '--cwd', dir], env);
    assert.equal(unchecked.code, 1);
    assert.match(unchecked.err, /unpricedModel|No price card prices/);
    assert.equal(server.requests.length, before);

    // A cap blocks as well: a big grant, a daily cap below one call's bound.
    assert.equal((await vox('budget', 'grant', '10', '--usd', '--kind', 'bonus')).code, 0);
    const cap = await vox('budget', 'set', '--daily-cap', '50', '--json');
    assert.equal(cap.code, 0, cap.err);
    assert.deepEqual(JSON.parse(cap.out).caps, [{ scope: 'daily', threadId: null, capMicroUsd: 50_000, action: 'block' }]);
    const capped = await vox('chat', 'capped');
    assert.equal(capped.code, 1);
    assert.match(capped.err, /capReached|would be passed/);
    assert.equal(server.requests.length, before);
  });

  it('a warn cap tells at its thresholds as a turn crosses them; a block cap stops the turn at the call that would pass it', async () => {
    fs.writeFileSync(path.join(dir, 'notes.md'), 'alpha\n');
    // $1 per million input tokens, output free: a call costs its reported input tokens in µ$.
    const call1 = { inputTokens: 600, outputTokens: 10 };
    const call2 = { inputTokens: 500, outputTokens: 10 };
    server = await startFakeOpenAI({ responses: [
      toolCallTurn([{ name: 'read_file', args: { path: 'notes.md' } }], { usage: call1 }), textTurn('It says alpha.', { usage: call2 }),
      toolCallTurn([{ name: 'read_file', args: { path: 'notes.md' } }], { usage: { inputTokens: 2_500, outputTokens: 10 } }), textTurn('never sent'),
    ] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-test' };
    const vox = (...args: string[]) => runVox([...args, '--cwd', dir], env);
    assert.equal((await vox('prices', 'set', 'gpt-test', '--input', '1', '--output', '0')).code, 0);
    assert.equal((await vox('budget', 'set', '--run-cap', '1', '--action', 'warn')).code, 0);
    const warned = await vox('chat', 'what do the notes say?');
    assert.equal(warned.code, 0, warned.err);
    const warnings = warned.err.split('\n').filter((l) => l.startsWith('[vox] budget:'));
    assert.deepEqual(warnings, [
      '[vox] budget: 50 % of the per-run cap ($0.001000) spent: $0.000600.',
      '[vox] budget: 100 % of the per-run cap ($0.001000) spent: $0.001100.',
    ]);
    assert.equal(server.requests.length, 2);

    // A block cap of 3 BU: the first call's bound (the prompt with its tool schemas, under 2,000
    // tokens) fits; after it reported 2,500 µ$, the second call's bound does not.
    assert.equal((await vox('budget', 'set', '--run-cap', '3', '--action', 'block')).code, 0);
    const blocked = await vox('chat', 'and again?');
    assert.equal(blocked.code, 1, blocked.err);
    assert.match(blocked.err, /LedgerError \(capReached\): The per-run cap \(\$0\.003000\) would be passed: \$0\.002500 spent/);
    assert.equal(server.requests.length, 3, 'the first call ran; the second was refused unsent');
    const r = JSON.parse((await vox('usage', '--json')).out) as UsageReport;
    assert.equal(r.todayMicroUsd, 600 + 500 + 2_500);
  });

  it('one receipt per response id within a run, and 50 receipts from ten processes at once lose nothing', async () => {
    const db = path.join(dir, 'vox.db');
    const store = VoxStore.open(db);
    try {
      const tokens = { input: 10, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 1, reasoning: 0 };
      const receipt = { threadId: 'thread:t', runId: 'run:1', responseId: 'msg_1', model: 'anthropic:claude', tokens, costMicroUsd: 7, costSource: 'priced' as const, card: null, premiums: [], pricedMicroUsd: null };
      assert.equal(recordReceipt(store, receipt), true);
      assert.equal(recordReceipt(store, receipt), false, 'the same response reported twice is one row');
      assert.equal(recordReceipt(store, { ...receipt, runId: 'run:2' }), true, 'another run may reuse a local server\'s id');
    } finally {
      store.close();
    }
    const specs = Array.from({ length: 10 }, (_, i) => ({ db, runId: `run:p${i}`, count: 5, costMicroUsd: 1_000 + i, grantMicroUsd: 100_000 }));
    await Promise.all(specs.map(child));
    const s = VoxStore.open(db, { readonly: true });
    try {
      const rows = (s.db.prepare("SELECT COUNT(*) AS n FROM ledger_receipts WHERE run_id LIKE 'run:p%'").get() as { n: number }).n;
      assert.equal(rows, 50);
      const balance = (s.db.prepare('SELECT balance_micro_usd AS b FROM ledger_balance').get() as { b: number }).b;
      const usage = specs.reduce((sum, x) => sum + 5 * x.costMicroUsd, 0) + 14;
      assert.equal(balance, 10 * 100_000 - usage);
      const last = s.db.prepare('SELECT balance_after_micro_usd AS a FROM ledger_transactions ORDER BY id DESC LIMIT 1').get() as { a: number };
      assert.equal(last.a, balance, 'each transaction carries the balance after it');
    } finally {
      s.close();
    }
  });
});
