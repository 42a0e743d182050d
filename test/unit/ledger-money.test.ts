/**
 * The ledger's money (src/engine/ledger/money.ts, prices.ts): cost expressions on valid and
 * hostile input, and exact micro-dollar pricing of OpenAI- and Anthropic-style usage, each token
 * class hand-computed.
 */
import { strict as assert } from 'node:assert';
import { evalCostExpression, formatMicroUsd, buToMicro, usdToMicro } from '../../src/engine/ledger/money';
import { cardFromLiteLlm, ledgerTokensOf, priceTokens } from '../../src/engine/ledger/prices';
import { LedgerError } from '../../src/engine/ledger/errors';

const meta = { source: 'bundled' as const, version: 'test', fetchedAt: '2026-12-01' };
const isLedger = (code: string) => (e: unknown): boolean => e instanceof LedgerError && e.code === code;

describe('ledger money: cost expressions', () => {
  it('reads numbers and + - * / ( )', () => {
    assert.equal(evalCostExpression('3.0/1e6'), 0.000003);
    assert.equal(evalCostExpression('(1+2)*3'), 9);
    assert.equal(evalCostExpression(' 15 / 1000000 '), 0.000015);
    assert.equal(evalCostExpression('-(-2)'), 2);
    assert.equal(evalCostExpression('.5e-6'), 5e-7);
  });
  it('refuses everything else with a typed error, never evaluating it', () => {
    for (const bad of ['process.exit()', 'require("fs")', '1/0', '1e999', '1e308*10', '2**3', '0x10', '', '   ', '(1', '1)', '1 2', '-1', '3;1', '`1`']) {
      assert.throws(() => evalCostExpression(bad), isLedger('invalidExpression'), bad);
    }
  });
  it('refuses 10,000 nested parentheses and over-long input without recursing into them', () => {
    assert.throws(() => evalCostExpression('('.repeat(10_000) + '1' + ')'.repeat(10_000)), isLedger('invalidExpression'));
    assert.throws(() => evalCostExpression('('.repeat(17) + '1' + ')'.repeat(17)), /nested deeper/);
    assert.equal(evalCostExpression('('.repeat(16) + '1' + ')'.repeat(16)), 1);
  });
  it('converts amounts exactly and shows six decimals', () => {
    assert.equal(usdToMicro(0.000003), 3);
    assert.equal(usdToMicro(17.92), 17_920_000);
    assert.equal(buToMicro(1), 1_000);
    assert.equal(buToMicro(0.001), 1);
    assert.equal(formatMicroUsd(32_030_000), '$32.030000');
    assert.equal(formatMicroUsd(-5), '-$0.000005');
    assert.throws(() => usdToMicro(Infinity), isLedger('invalidAmount'));
  });
});

describe('ledger money: pricing a response', () => {
  // $2.50 / $10 per million, cached input $1.25 (gpt-4o's published rates).
  const gpt = cardFromLiteLlm('gpt-4o', { input_cost_per_token: 2.5e-6, output_cost_per_token: 1e-5, cache_read_input_token_cost: 1.25e-6 }, meta);
  // $3 / $15, cache read $0.30, 5-minute write $3.75, 1-hour write $6; above 200k: $6 / $22.50, read $0.60, write $7.50.
  const claude = cardFromLiteLlm('claude-sonnet-4-5', {
    input_cost_per_token: '3/1e6', output_cost_per_token: '15/1e6', cache_read_input_token_cost: '0.3/1e6',
    cache_creation_input_token_cost: '3.75/1e6', cache_creation_input_token_cost_above_1hr: '6/1e6',
    input_cost_per_token_above_200k_tokens: '6/1e6', output_cost_per_token_above_200k_tokens: '22.5/1e6',
    cache_read_input_token_cost_above_200k_tokens: '0.6/1e6', cache_creation_input_token_cost_above_200k_tokens: '7.5/1e6',
  }, meta);

  it('OpenAI-style: cached tokens are part of prompt_tokens and reasoning part of completion_tokens (neither counted twice)', () => {
    // prompt_tokens 12,000 of which cached 8,000; completion_tokens 1,500 of which reasoning 1,000.
    const t = ledgerTokensOf({ inputTokens: 12_000, cacheReadTokens: 8_000, outputTokens: 1_500, reasoningTokens: 1_000 });
    assert.deepEqual(t, { input: 4_000, cacheRead: 8_000, cacheWrite5m: 0, cacheWrite1h: 0, output: 1_500, reasoning: 1_000 });
    // 4,000 × 2.5 µ$ = 10,000; 8,000 × 1.25 µ$ = 10,000; 1,500 × 10 µ$ = 15,000 → 35,000 µ$.
    assert.deepEqual(priceTokens(gpt, t), { costMicroUsd: 35_000, premiums: [] });
  });
  it('Anthropic-style: 5-minute and 1-hour cache writes priced apart, reads at their own rate', () => {
    // input_tokens 1,000 (uncached) + cache_creation 20,000 (ephemeral_1h 5,000) + cache_read 50,000; output 2,000.
    const t = ledgerTokensOf({ inputTokens: 71_000, cacheWriteTokens: 20_000, cacheWrite1hTokens: 5_000, cacheReadTokens: 50_000, outputTokens: 2_000 });
    assert.deepEqual(t, { input: 1_000, cacheRead: 50_000, cacheWrite5m: 15_000, cacheWrite1h: 5_000, output: 2_000, reasoning: 0 });
    // 1,000×3 + 50,000×0.3 + 15,000×3.75 + 5,000×6 + 2,000×15 = 3,000 + 15,000 + 56,250 + 30,000 + 30,000 = 134,250 µ$.
    assert.deepEqual(priceTokens(claude, t), { costMicroUsd: 134_250, premiums: [] });
  });
  it('the long-context tier applies above 200k prompt tokens, to the whole request', () => {
    const at = ledgerTokensOf({ inputTokens: 200_000, outputTokens: 1_000 });
    assert.deepEqual(priceTokens(claude, at), { costMicroUsd: 200_000 * 3 + 1_000 * 15, premiums: [] });
    const above = ledgerTokensOf({ inputTokens: 200_001, outputTokens: 1_000 });
    assert.deepEqual(priceTokens(claude, above), { costMicroUsd: 200_001 * 6 + 1_000 * 22.5, premiums: ['contextAbove200k'] });
  });
  it('rounds once per response, half up, from exact pico-dollar rates', () => {
    const mini = cardFromLiteLlm('gpt-4o-mini', { input_cost_per_token: 1.5e-7, output_cost_per_token: 6e-7 }, meta);
    // 3 × 0.15 µ$ + 1 × 0.6 µ$ = 1.05 µ$ → 1; 7 × 0.15 = 1.05 + 0 → 1; 10 × 0.15 = 1.5 → 2.
    assert.equal(priceTokens(mini, ledgerTokensOf({ inputTokens: 3, outputTokens: 1 })).costMicroUsd, 1);
    assert.equal(priceTokens(mini, ledgerTokensOf({ inputTokens: 10, outputTokens: 0 })).costMicroUsd, 2);
  });
  it('a card that does not read is a typed error', () => {
    assert.throws(() => cardFromLiteLlm('x', { output_cost_per_token: 1e-6 }, meta), isLedger('invalidPriceCard'));
    assert.throws(() => cardFromLiteLlm('x', { input_cost_per_token: 'process.exit()', output_cost_per_token: 1e-6 }, meta), isLedger('invalidExpression'));
    assert.throws(() => cardFromLiteLlm('x', { input_cost_per_token: -1, output_cost_per_token: 1e-6 }, meta), isLedger('invalidPriceCard'));
  });
});
