/**
 * Stateless dynamic client registration (src/mcp-server/http/client-id.ts): the id round-trips its
 * registration, its MAC is BLAKE3 keyed (checked against @noble/hashes directly), the key is
 * created once in the secret store, and any forged or altered id is refused with invalidClient.
 */
import { strict as assert } from 'node:assert';
import { blake3 } from '@noble/hashes/blake3.js';
import { memorySecretStore } from '../../src/engine/host';
import { CLIENT_KEY_SECRET, canonicalPayload, isAllowedRedirectUri, issueClientId, loadClientKey, registrationFrom, verifyClientId } from '../../src/mcp-server/http/client-id';
import { McpServerError } from '../../src/mcp-server/http/errors';

const reg = { client_name: 'Claude Code', redirect_uris: ['http://localhost:5555/callback'], issued_at: 1_800_000_000 };

function refused(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof McpServerError && e.code === code);
}

describe('MCP server: stateless client ids', () => {
  it('creates the 32-byte key once in the secret store and reuses it', async () => {
    const secrets = memorySecretStore();
    const k1 = await loadClientKey(secrets);
    assert.equal(k1.length, 32);
    assert.match((await secrets.get(CLIENT_KEY_SECRET))!, /^[0-9a-f]{64}$/);
    const k2 = await loadClientKey(secrets);
    assert.deepEqual(k2, k1);
    const other = await loadClientKey(memorySecretStore());
    assert.notDeepEqual(other, k1);
  });

  it('client_id = vox_<hex(canonical payload)>.<hex(BLAKE3 keyed MAC)> and verifies back to the registration', async () => {
    const key = await loadClientKey(memorySecretStore());
    const id = issueClientId(key, reg);
    const payload = Buffer.from(canonicalPayload(reg));
    assert.equal(payload.toString(), '{"client_name":"Claude Code","issued_at":1800000000,"redirect_uris":["http://localhost:5555/callback"]}');
    assert.equal(id, `vox_${payload.toString('hex')}.${Buffer.from(blake3(payload, { key })).toString('hex')}`);
    assert.deepEqual(verifyClientId(key, id), reg);
  });

  it('refuses a forged MAC, an altered payload, another key and malformed ids with invalidClient', async () => {
    const key = await loadClientKey(memorySecretStore());
    const id = issueClientId(key, reg);
    const [body, macHex] = id.split('.') as [string, string];
    const flipped = macHex.slice(0, -1) + (macHex.endsWith('0') ? '1' : '0');
    refused(() => verifyClientId(key, `${body}.${flipped}`), 'invalidClient');
    const evil = Buffer.from(canonicalPayload({ ...reg, redirect_uris: ['https://evil.example/cb'] })).toString('hex');
    refused(() => verifyClientId(key, `vox_${evil}.${macHex}`), 'invalidClient');
    const otherKey = await loadClientKey(memorySecretStore());
    refused(() => verifyClientId(otherKey, id), 'invalidClient');
    // A MAC made with a guessed all-zero key does not verify either.
    const zero = new Uint8Array(32);
    const forged = `vox_${evil}.${Buffer.from(blake3(Buffer.from(evil, 'hex'), { key: zero })).toString('hex')}`;
    refused(() => verifyClientId(key, forged), 'invalidClient');
    for (const junk of [undefined, '', 'vox_', 'vox_zz.00', `vox_${body.slice(4)}`, id.toUpperCase(), `${id}0`, 'x'.repeat(20_000), 42]) refused(() => verifyClientId(key, junk), 'invalidClient');
  });

  it('registration accepts https and loopback http redirect URIs only, public clients only', () => {
    assert.ok(isAllowedRedirectUri('http://127.0.0.1:33418/callback'));
    assert.ok(isAllowedRedirectUri('http://localhost/cb'));
    assert.ok(isAllowedRedirectUri('https://app.example/cb'));
    for (const u of ['http://example.com/cb', 'http://127.0.0.1.evil.com/cb', 'javascript:alert(1)', 'https://a/b#frag', 'https://u:p@a/b', 'not a url']) assert.equal(isAllowedRedirectUri(u), false, u);
    assert.deepEqual(registrationFrom({ redirect_uris: ['http://localhost:1/cb'], client_name: 'X' }, 7), { client_name: 'X', redirect_uris: ['http://localhost:1/cb'], issued_at: 7 });
    assert.equal(registrationFrom({ redirect_uris: ['http://localhost:1/cb'] }, 7).client_name, 'MCP client');
    for (const bad of [null, [], {}, { redirect_uris: [] }, { redirect_uris: ['http://evil.com/cb'] }, { redirect_uris: ['http://localhost/cb'], client_name: 5 }, { redirect_uris: ['http://localhost/cb'], token_endpoint_auth_method: 'client_secret_basic' }, { redirect_uris: Array(9).fill('http://localhost/cb') }]) {
      refused(() => registrationFrom(bad, 1), 'invalidRequest');
    }
  });
});
