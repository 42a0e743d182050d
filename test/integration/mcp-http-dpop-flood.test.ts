/**
 * DPoP replay protection of Vox's MCP HTTP server under a flood (src/mcp-server/http/): a real
 * server on 127.0.0.1, proofs signed with jose by clients of the test's own. A proof used once
 * stays refused however many other proofs arrive in its `iat` window; a full jti store refuses
 * new proofs with 503 + Retry-After instead of forgetting live ones; one key sending too many
 * proofs is answered 429 + Retry-After. The server's clock is injected and frozen, so no bucket
 * refills and no entry expires while a test runs.
 */
import { strict as assert } from 'node:assert';
import { memorySecretStore } from '../../src/engine/host';
import { DPOP_KEY_MAX_LIVE } from '../../src/mcp-server/http/replay-store';
import { startVoxMcpHttpServer, type VoxMcpHttpServer } from '../../src/mcp-server/http/server';
import { DpopSigner, rawSignIn, testServerFor } from '../support/mcp-dpop-client';

/** The flood of the report: more proofs than the old 10,000-entry ring held. */
const FLOOD = 10_050;
/** Requests in flight at once while flooding (keeps the test quick without exhausting sockets). */
const PARALLEL = 16;
const NOW_MS = 1_900_000_000_000;

async function register(origin: string): Promise<string> {
  const r = await fetch(`${origin}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'flooder', redirect_uris: ['http://127.0.0.1:9/cb'] }) });
  return ((await r.json()) as { client_id: string }).client_id;
}

/** One /token request carrying a fresh valid proof of `signer` (the grant itself is junk: the proof is checked first). */
async function tokenWithProof(origin: string, signer: DpopSigner, clientId: string): Promise<Response> {
  const dpop = await signer.proof('POST', `${origin}/token`);
  return fetch(`${origin}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'junk', client_id: clientId }).toString() });
}

async function flood(origin: string, signers: DpopSigner[], clientId: string, count: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const r = await tokenWithProof(origin, signers[i % signers.length]!, clientId);
      await r.arrayBuffer();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return statuses;
}

const frozen = (signer: DpopSigner) => {
  signer.clock = () => Math.floor(NOW_MS / 1000);
  return signer;
};

describe('MCP HTTP server: DPoP replay protection cannot be flushed', function () {
  this.timeout(180_000);
  let server: VoxMcpHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = (replayLimits?: { maxEntries?: number }) =>
    startVoxMcpHttpServer({ host: '127.0.0.1', port: 0, secrets: memorySecretStore(), serverFor: testServerFor, chooseGrant: async () => 'readOnly', now: () => NOW_MS, ...(replayLimits ? { replayLimits } : {}) });

  it(`a proof used once is refused again after ${FLOOD} other valid proofs from other keys`, async () => {
    server = await start();
    const origin = new URL(server.url).origin;
    const victim = frozen(await DpopSigner.create('ES256'));
    const t = await rawSignIn(origin, victim);
    const proof = await victim.proof('POST', server.url, t.accessToken);
    const call = () =>
      fetch(server!.url, {
        method: 'POST',
        headers: { authorization: `DPoP ${t.accessToken}`, dpop: proof, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'victim', version: '1' } } }),
      });
    const first = await call();
    assert.equal(first.status, 200, await first.text());

    const clientId = await register(origin);
    // Enough keys that none of them reaches its own rate limit: the flood is of valid proofs.
    const keys = Math.ceil(FLOOD / (DPOP_KEY_MAX_LIVE / 2));
    const signers = await Promise.all(Array.from({ length: keys }, async () => frozen(await DpopSigner.create('ES256'))));
    const statuses = await flood(origin, signers, clientId, FLOOD);
    assert.deepEqual([...statuses], [[400, FLOOD]], 'every flood proof was accepted (and its junk grant refused)');

    const again = await call();
    assert.equal(again.status, 401, 'the replayed proof is refused');
    const body = (await again.json()) as { error: { message: string } };
    assert.match(body.error.message, /replayed/);
  });

  it('a full jti store answers 503 with Retry-After (on /token and on /mcp) and forgets no live proof', async () => {
    const maxEntries = 40;
    server = await start({ maxEntries });
    const origin = new URL(server.url).origin;
    const user = frozen(await DpopSigner.create('ES256'));
    const t = await rawSignIn(origin, user); // one proof in the store
    const clientId = await register(origin);
    const signers = await Promise.all(Array.from({ length: 4 }, async () => frozen(await DpopSigner.create('EdDSA'))));
    const statuses = await flood(origin, signers, clientId, maxEntries - 1);
    assert.deepEqual([...statuses], [[400, maxEntries - 1]]);

    const full = await tokenWithProof(origin, signers[0]!, clientId);
    assert.equal(full.status, 503);
    const retry = Number(full.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry > 0, `Retry-After is a positive number of seconds: ${full.headers.get('retry-after')}`);
    assert.equal(((await full.json()) as { error: string }).error, 'temporarily_unavailable');

    const mcp = await fetch(server.url, {
      method: 'POST',
      headers: { authorization: `DPoP ${t.accessToken}`, dpop: await user.proof('POST', server.url, t.accessToken), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'u', version: '1' } } }),
    });
    assert.equal(mcp.status, 503);
    assert.ok(Number(mcp.headers.get('retry-after')) > 0);
    assert.match(((await mcp.json()) as { error: { message: string } }).error.message, /retry/i);
  });

  it(`one key sending more than ${DPOP_KEY_MAX_LIVE} proofs in a window is answered 429 with Retry-After; other keys go on`, async () => {
    server = await start();
    const origin = new URL(server.url).origin;
    const clientId = await register(origin);
    const greedy = frozen(await DpopSigner.create('ES256'));
    const statuses = await flood(origin, [greedy], clientId, DPOP_KEY_MAX_LIVE);
    assert.deepEqual([...statuses], [[400, DPOP_KEY_MAX_LIVE]]);
    const limited = await tokenWithProof(origin, greedy, clientId);
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry > 0, `Retry-After: ${limited.headers.get('retry-after')}`);
    assert.equal(((await limited.json()) as { error: string }).error, 'temporarily_unavailable');
    const other = await tokenWithProof(origin, frozen(await DpopSigner.create('ES256')), clientId);
    assert.equal(other.status, 400, 'another key is not limited');
  });
});
