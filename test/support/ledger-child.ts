/**
 * A separate process writing to the ledger (for the concurrency test): opens the database as the
 * engine does and records `count` receipts of `costMicroUsd` each for run `runId`, plus one grant
 * of `grantMicroUsd`, interleaved, then prints `done`. Run as `node --import tsx ledger-child.ts JSON`.
 */
import { setDefaultStoreSchemas } from '../../src/engine/store/schema';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { VoxStore } from '../../src/engine/store/store';
import { grant, recordReceipt } from '../../src/engine/ledger/writes';

setDefaultStoreSchemas(STORE_SCHEMAS);
const spec = JSON.parse(process.argv[2]!) as { db: string; runId: string; count: number; costMicroUsd: number; grantMicroUsd: number };
const store = VoxStore.open(spec.db);
try {
  for (let i = 0; i < spec.count; i++) {
    const tokens = { input: 100 + i, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 10, reasoning: 0 };
    recordReceipt(store, { threadId: 'thread:shared', runId: spec.runId, responseId: `resp-${i}`, model: 'openai:gpt-test', tokens, costMicroUsd: spec.costMicroUsd, costSource: 'priced', card: null, premiums: [], pricedMicroUsd: null });
    if (i === 0) grant(store, { kind: 'purchase', amountMicroUsd: spec.grantMicroUsd, note: null });
  }
  process.stdout.write('done\n');
} finally {
  store.close();
}
