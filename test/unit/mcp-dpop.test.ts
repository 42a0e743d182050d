/**
 * DPoP proof validation (src/mcp-server/http/dpop.ts) against proofs made by an independent
 * library (jose): valid ES256 / EdDSA / RS256 proofs pass; each RFC 9449 §4.3 check refuses the
 * proof it is about with a typed McpServerError.
 */
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import { DPOP_MAX_AGE_S, accessTokenHash, normaliseHtu, verifyDpopProof } from '../../src/mcp-server/http/dpop';
import { DPOP_JTI_STORE_MAX, DPOP_KEY_MAX_LIVE, DPOP_MIN_KEEP_MS, JtiReplayStore } from '../../src/mcp-server/http/replay-store';
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
  const expect = (over: Partial<Parameters<typeof verifyDpopProof>[1]> = {}) => ({ method: 'POST', url: URL_MCP, now: NOW, replay: new JtiReplayStore(), ...over });

  for (const alg of ['ES256', 'ES384', 'EdDSA', 'RS256'] as const) {
    it(`accepts a ${alg} proof made by jose and returns the RFC 7638 thumbprint jose computes`, async () => {
      const k = await key(alg);
      const v = verifyDpopProof(await proof(k), expect());
      assert.equal(v.alg, alg);
      assert.equal(v.jkt, await calculateJwkThumbprint(k.jwk, 'sha256'));
    });
  }

  it('refuses a replayed jti (the same proof twice) with dpopReplay', async () => {
    const replay = new JtiReplayStore();
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

  it('a replay is refused for as long as the proof\'s iat window lasts, then as stale', async () => {
    const replay = new JtiReplayStore();
    const p = await proof(es);
    verifyDpopProof(p, expect({ replay }));
    refused(() => verifyDpopProof(p, expect({ replay, now: NOW + DPOP_MAX_AGE_S * 1000 })), 'dpopReplay');
    refused(() => verifyDpopProof(p, expect({ replay, now: NOW + DPOP_MAX_AGE_S * 1000 + 1_000 })), 'invalidDpop', /iat/);
  });
});

describe('the DPoP jti store (injected clock)', () => {
  const T0 = 1_800_000_000_000;
  const WINDOW_MS = DPOP_MAX_AGE_S * 1000;
  const code = (fn: () => unknown): { code: string; retryAfterS?: unknown } => {
    try {
      fn();
    } catch (e) {
      assert.ok(e instanceof McpServerError, String(e));
      return { code: e.code, retryAfterS: e.details?.retryAfterS };
    }
    return { code: 'accepted' };
  };

  it('defaults: the named limits', () => {
    assert.deepEqual(new JtiReplayStore().limits, { maxEntries: DPOP_JTI_STORE_MAX, perKey: DPOP_KEY_MAX_LIVE });
  });

  it('a used jti stays refused after 10,050 other proofs from other keys (nothing live is evicted)', () => {
    const s = new JtiReplayStore();
    s.admit('victim', 'used', T0 + WINDOW_MS, T0);
    for (let i = 0; i < 10_050; i++) s.admit(`k${i % 7}`, `j${i}`, T0 + WINDOW_MS, T0 + i);
    assert.equal(code(() => s.admit('victim', 'used', T0 + WINDOW_MS, T0 + 10_050)).code, 'dpopReplay');
    assert.equal(s.size, 10_051);
    assert.equal(code(() => s.admit('other-key', 'used', T0 + WINDOW_MS, T0)).code, 'accepted', 'jti values are per key thumbprint');
  });

  it('a full store refuses new proofs with the seconds until its soonest entry expires, and takes them again once it has', () => {
    const s = new JtiReplayStore({ maxEntries: 3 });
    s.admit('a', '1', T0 + 90_000, T0);
    s.admit('b', '2', T0 + 200_000, T0);
    s.admit('c', '3', T0 + 300_000, T0);
    assert.deepEqual(code(() => s.admit('d', '4', T0 + 300_000, T0 + 10_000)), { code: 'dpopStoreFull', retryAfterS: 80 });
    assert.equal(s.has('a', '1'), true, 'the oldest is still held');
    assert.equal(code(() => s.admit('a', '1', T0 + 90_000, T0 + 10_000)).code, 'dpopReplay', 'a replay is a replay even when full');
    assert.equal(code(() => s.admit('d', '4', T0 + 300_000, T0 + 90_000)).code, 'accepted');
    assert.equal(s.has('a', '1'), false);
    assert.equal(s.size, 3);
  });

  it('one key over its limit is refused with the seconds until its own soonest entry expires; other keys are not', () => {
    const s = new JtiReplayStore({ perKey: 2 });
    s.admit('greedy', '1', T0 + 120_000, T0);
    s.admit('greedy', '2', T0 + 100_000, T0);
    assert.deepEqual(code(() => s.admit('greedy', '3', T0 + WINDOW_MS, T0 + 40_000)), { code: 'dpopRateLimited', retryAfterS: 60 });
    assert.equal(code(() => s.admit('modest', '3', T0 + WINDOW_MS, T0 + 40_000)).code, 'accepted');
    assert.equal(code(() => s.admit('greedy', '3', T0 + WINDOW_MS, T0 + 100_000)).code, 'accepted', 'after its entry expired');
  });

  it('expired entries are dropped as the clock passes them: memory stays bounded by what is live', () => {
    const s = new JtiReplayStore();
    for (let i = 0; i < 5_000; i++) s.admit(`k${i % 50}`, `j${i}`, T0 + ((i * 37) % WINDOW_MS), T0);
    assert.equal(s.size, 5_000);
    s.expire(T0 + WINDOW_MS / 2);
    assert.ok(s.size > 0 && s.size < 5_000, `some expired: ${s.size}`);
    s.admit('late', 'x', T0 + 2 * WINDOW_MS, T0 + WINDOW_MS);
    assert.equal(s.size, 1, 'everything else has expired');
    assert.equal(s.has('k0', 'j0'), false);
  });

  it(`an entry is kept at least ${DPOP_MIN_KEEP_MS} ms, even for a proof back-dated to the window's edge`, () => {
    const s = new JtiReplayStore({ perKey: 1 });
    s.admit('k', 'old', T0 + 1, T0);
    assert.equal(code(() => s.admit('k', 'next', T0 + WINDOW_MS, T0 + 1_000)).code, 'dpopRateLimited');
    assert.equal(code(() => s.admit('k', 'next', T0 + WINDOW_MS, T0 + DPOP_MIN_KEEP_MS)).code, 'accepted');
  });
});
