/**
 * DPoP proof validation (src/mcp-server/http/dpop.ts) against proofs made by an independent
 * library (jose): valid ES256 / EdDSA / RS256 proofs pass; each RFC 9449 §4.3 check refuses the
 * proof it is about with a typed McpServerError.
 */
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import { DPOP_JTI_CACHE, DPOP_MAX_AGE_S, JtiReplayCache, accessTokenHash, normaliseHtu, verifyDpopProof } from '../../src/mcp-server/http/dpop';
import { McpServerError } from '../../src/mcp-server/http/errors';

const URL_MCP = 'http://127.0.0.1:4711/mcp';
const NOW = 1_800_000_000_000;

interface Key { alg: string; priv: CryptoKey; jwk: JWK }
async function key(alg: 'ES256' | 'EdDSA' | 'RS256' | 'ES384'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined, extractable: true });
  return { alg, priv: privateKey, jwk: await exportJWK(publicKey) };
}

async function proof(k: Key, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ jti: randomUUID(), htm: 'POST', htu: URL_MCP, iat: Math.floor(NOW / 1000), ...claims })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: k.alg, jwk: k.jwk, ...header } as never)
    .sign(k.priv);
}

function refused(fn: () => unknown, code: 'invalidDpop' | 'dpopReplay', text?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof McpServerError, `expected McpServerError, got ${String(e)}`);
    assert.equal(e.code, code);
    if (text) assert.match(e.message, text);
    return true;
  });
}

describe('DPoP proof validation (RFC 9449)', () => {
  let es: Key;
  before(async () => {
    es = await key('ES256');
  });
  const expect = (over: Partial<Parameters<typeof verifyDpopProof>[1]> = {}) => ({ method: 'POST', url: URL_MCP, now: NOW, replay: new JtiReplayCache(), ...over });

  for (const alg of ['ES256', 'ES384', 'EdDSA', 'RS256'] as const) {
    it(`accepts a ${alg} proof made by jose and returns the RFC 7638 thumbprint jose computes`, async () => {
      const k = await key(alg);
      const v = verifyDpopProof(await proof(k), expect());
      assert.equal(v.alg, alg);
      assert.equal(v.jkt, await calculateJwkThumbprint(k.jwk, 'sha256'));
    });
  }

  it('refuses a replayed jti (the same proof twice) with dpopReplay', async () => {
    const replay = new JtiReplayCache();
    const p = await proof(es);
    verifyDpopProof(p, expect({ replay }));
    refused(() => verifyDpopProof(p, expect({ replay })), 'dpopReplay');
  });

  it('refuses a wrong htm', async () => {
    refused(() => verifyDpopProof(p1, expect({ method: 'GET' })), 'invalidDpop', /htm/);
  });
  let p1: string;
  before(async () => {
    p1 = await proof(es);
  });

  it('refuses a wrong htu (other path, other port) but ignores query and fragment', async () => {
    refused(() => verifyDpopProof(p1, expect({ url: 'http://127.0.0.1:4711/token' })), 'invalidDpop', /htu/);
    refused(() => verifyDpopProof(p1, expect({ url: 'http://127.0.0.1:4712/mcp' })), 'invalidDpop', /htu/);
    const withQuery = await proof(es, { htu: 'HTTP://127.0.0.1:4711/./mcp?x=1#frag' });
    assert.ok(verifyDpopProof(withQuery, expect({ url: `${URL_MCP}?y=2` })).jkt);
    assert.equal(normaliseHtu('HTTP://LOCALHOST:80/a/../mcp?q#f'), 'http://localhost/mcp');
  });

  it(`refuses a stale or future iat (beyond ${DPOP_MAX_AGE_S} s), accepts one just inside`, async () => {
    const old = await proof(es, { iat: Math.floor(NOW / 1000) - DPOP_MAX_AGE_S - 1 });
    refused(() => verifyDpopProof(old, expect()), 'invalidDpop', /iat/);
    const future = await proof(es, { iat: Math.floor(NOW / 1000) + DPOP_MAX_AGE_S + 1 });
    refused(() => verifyDpopProof(future, expect()), 'invalidDpop', /iat/);
    const edge = await proof(es, { iat: Math.floor(NOW / 1000) - DPOP_MAX_AGE_S + 1 });
    assert.ok(verifyDpopProof(edge, expect()));
    refused(() => verifyDpopProof(edge, expect({ now: NOW + 5_000 })), 'invalidDpop', /iat/);
  });

  it('refuses a bad signature (a proof signed by another key than the jwk in its header; a flipped byte)', async () => {
    const other = await key('ES256');
    const lying = await proof(other, {}, { jwk: es.jwk });
    refused(() => verifyDpopProof(lying, expect()), 'invalidDpop', /signature/);
    const p = await proof(es);
    const [h, c, s] = p.split('.') as [string, string, string];
    const sig = Buffer.from(s, 'base64url');
    sig[5] = sig[5]! ^ 0xff;
    refused(() => verifyDpopProof(`${h}.${c}.${sig.toString('base64url')}`, expect()), 'invalidDpop', /signature/);
    const body = Buffer.from(JSON.stringify({ jti: 'x', htm: 'POST', htu: URL_MCP, iat: NOW / 1000 })).toString('base64url');
    refused(() => verifyDpopProof(`${h}.${body}.${s}`, expect()), 'invalidDpop', /signature/);
  });

  it('refuses a wrong typ, alg none / HS256, a jwk with private members, a jwk that does not fit alg', async () => {
    refused(() => verifyDpopProof(pTyp, expect()), 'invalidDpop', /typ/);
    const h = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const c = h({ jti: 'j', htm: 'POST', htu: URL_MCP, iat: NOW / 1000 });
    refused(() => verifyDpopProof(`${h({ typ: 'dpop+jwt', alg: 'none', jwk: es.jwk })}.${c}.`, expect()), 'invalidDpop', /alg/);
    refused(() => verifyDpopProof(`${h({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct', k: 'AAAA' } })}.${c}.AAAA`, expect()), 'invalidDpop', /alg/);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privJwk = await exportJWK(privateKey);
    const withD = await new SignJWT({ jti: 'k', htm: 'POST', htu: URL_MCP, iat: NOW / 1000 }).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: privJwk } as never).sign(privateKey);
    refused(() => verifyDpopProof(withD, expect()), 'invalidDpop', /private/);
    const ed = await key('EdDSA');
    refused(() => verifyDpopProof(`${h({ typ: 'dpop+jwt', alg: 'ES256', jwk: ed.jwk })}.${c}.AAAA`, expect()), 'invalidDpop', /does not fit/);
  });
  let pTyp: string;
  before(async () => {
    pTyp = await proof(es, {}, { typ: 'JWT' });
  });

  it('requires ath = base64url(SHA-256(token)) when a token is presented', async () => {
    const token = 'tok-123';
    const noAth = await proof(es);
    refused(() => verifyDpopProof(noAth, expect({ accessToken: token })), 'invalidDpop', /ath/);
    const wrongAth = await proof(es, { ath: accessTokenHash('other') });
    refused(() => verifyDpopProof(wrongAth, expect({ accessToken: token })), 'invalidDpop', /ath/);
    const good = await proof(es, { ath: accessTokenHash(token) });
    assert.ok(verifyDpopProof(good, expect({ accessToken: token })));
  });

  it('refuses junk with invalidDpop and never echoes library text', () => {
    for (const junk of [undefined, '', 'a.b', 'a.b.c.d', '!!.!!.!!', `${'x'.repeat(9000)}`, 'eyJ9.eyJ9.AA', `${Buffer.from('[]').toString('base64url')}.e30.AA`]) {
      refused(() => verifyDpopProof(junk, expect()), 'invalidDpop', /^invalid DPoP proof: [a-zA-Z0-9 ().,"+-]+$/);
    }
  });

  it(`the replay cache is a bounded ring of ${DPOP_JTI_CACHE}: the oldest jti is forgotten first`, () => {
    const c = new JtiReplayCache();
    assert.equal(c.capacity, DPOP_JTI_CACHE);
    for (let i = 0; i < DPOP_JTI_CACHE; i++) assert.equal(c.remember(`j${i}`), true);
    assert.equal(c.size, DPOP_JTI_CACHE);
    assert.equal(c.remember('j0'), false);
    assert.equal(c.remember('new'), true);
    assert.equal(c.size, DPOP_JTI_CACHE);
    assert.equal(c.has('j0'), false, 'j0 was the oldest');
    assert.equal(c.has('j1'), true);
  });
});
