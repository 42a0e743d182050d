/**
 * The grant memory of Vox's MCP HTTP server (src/mcp-server/http/grants.ts): one prompt per
 * client however many sign-ins wait on it, the answer kept in the secret store under a hashed
 * key, refusals (and a failing prompt) not kept, and at most MAX_PENDING_GRANT_PROMPTS clients
 * waiting for the user at once.
 */
import { strict as assert } from 'node:assert';
import { memorySecretStore } from '../../src/engine/host';
import { GRANT_SECRET_PREFIX, GrantMemory, MAX_PENDING_GRANT_PROMPTS, grantSecretKey, type GrantRequest } from '../../src/mcp-server/http/grants';
import type { McpGrant } from '../../src/mcp-server/http/tokens';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const req: GrantRequest = { clientName: 'Agent', redirectUri: 'http://127.0.0.1:9/cb' };

describe('MCP server: grants chosen by the user', () => {
  it('concurrent sign-ins of one client share one prompt; the answer is stored under a hashed key and reused', async () => {
    const secrets = memorySecretStore();
    const answer = deferred<McpGrant | null>();
    const asked: GrantRequest[] = [];
    const g = new GrantMemory(secrets, (c) => {
      asked.push(c);
      return answer.promise;
    });
    const a = g.grantFor('vox_client.1', req);
    const b = g.grantFor('vox_client.1', req);
    await new Promise((r) => setImmediate(r));
    answer.resolve('default');
    assert.deepEqual(await Promise.all([a, b]), ['default', 'default']);
    assert.equal(asked.length, 1);
    const key = grantSecretKey('vox_client.1');
    assert.ok(key.startsWith(GRANT_SECRET_PREFIX) && !key.includes('vox_client'));
    assert.equal(await secrets.get(key), 'default');
    assert.equal(await g.grantFor('vox_client.1', req), 'default');
    assert.equal(asked.length, 1, 'not asked again');
  });

  it('a refusal, a dismissed prompt or a prompt that throws is null and is not remembered', async () => {
    const secrets = memorySecretStore();
    const answers: (() => Promise<McpGrant | null>)[] = [async () => null, async () => Promise.reject(new Error('prompt failed')), async () => 'bogus' as McpGrant, async () => 'readOnly'];
    const g = new GrantMemory(secrets, () => answers.shift()!());
    assert.equal(await g.grantFor('c', req), null);
    assert.equal(await g.grantFor('c', req), null);
    assert.equal(await g.grantFor('c', req), null);
    assert.equal(await secrets.get(grantSecretKey('c')), undefined);
    assert.equal(await g.grantFor('c', req), 'readOnly');
    assert.equal(await g.remembered('c'), 'readOnly');
  });

  it(`at most ${MAX_PENDING_GRANT_PROMPTS} clients wait for the user at once; the next is told busy`, async () => {
    const waits = Array.from({ length: MAX_PENDING_GRANT_PROMPTS }, () => deferred<McpGrant | null>());
    let i = 0;
    const g = new GrantMemory(memorySecretStore(), () => waits[i++]!.promise);
    const pending = waits.map((_, k) => g.grantFor(`client-${k}`, req));
    await new Promise((r) => setImmediate(r));
    assert.equal(await g.grantFor('one-too-many', req), 'busy');
    for (const w of waits) w.resolve('readOnly');
    await Promise.all(pending);
    waits.push(deferred());
    const later = g.grantFor('one-too-many', req);
    await new Promise((r) => setImmediate(r));
    waits[waits.length - 1]!.resolve('fullAccess');
    assert.equal(await later, 'fullAccess', 'room again once the prompts were answered');
  });
});
