/** The spend in the status bar: hidden until something was spent or granted; today's exact figure; the balance when enforced; unpriced responses named. */
import { strict as assert } from 'node:assert';
import { usageStatusText } from '../../src/extension/usage/usage-status-text';

const base = { todayMicroUsd: 0, totalMicroUsd: 0, balanceMicroUsd: 0, balanceEnforced: false, byModel: [] as never[] };
const model = (unpricedResponses: number) => ({ model: 'm', responses: 1, costMicroUsd: 0, unpricedResponses, providerReportedMicroUsd: 0, pricedForReportedMicroUsd: 0, tokens: { input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0, reasoning: 0 } });

describe('the spend in the status bar', () => {
  it('is hidden with nothing spent and no balance, and shows the exact micro-dollars otherwise', () => {
    assert.equal(usageStatusText(base), null);
    const spent = usageStatusText({ ...base, todayMicroUsd: 354, totalMicroUsd: 354, balanceMicroUsd: -354 })!;
    assert.equal(spent.text, '$(credit-card) $0.000354 today');
    assert.match(spent.tooltip, /No balance granted/);
    const granted = usageStatusText({ ...base, todayMicroUsd: 1_234_567, totalMicroUsd: 2_000_000, balanceMicroUsd: 3_000_000, balanceEnforced: true })!;
    assert.equal(granted.text, '$(credit-card) $1.234567 today · $3.000000 left');
    assert.match(granted.tooltip, /refused before it is sent/);
    const unpriced = usageStatusText({ ...base, byModel: [model(2)] })!;
    assert.match(unpriced.tooltip, /2 response\(s\) of models with no price card/);
  });
});
