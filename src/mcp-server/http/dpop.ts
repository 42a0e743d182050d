/**
 * DPoP proof validation (RFC 9449 §4.3), pure apart from node:crypto: the proof's header (`typ`
 * `dpop+jwt`, an asymmetric `alg` we support, a public `jwk` without private members), its
 * signature by that key, its claims (`htm`, `htu` without query or fragment, `iat` within
 * DPOP_MAX_AGE_S, a `jti` not seen before (./replay-store.ts), `ath` when an access token is presented), and the
 * RFC 7638 thumbprint of the key that tokens are bound to (`cnf.jkt`). Every failure is a
 * McpServerError ('invalidDpop' | 'dpopReplay' | 'dpopRateLimited' | 'dpopStoreFull') whose message
 * never echoes library text.
 */
import { createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { McpServerError } from './errors';
import type { JtiReplayStore } from './replay-store';

/** How far (seconds) a proof's `iat` may lie from our clock, either way (RFC 9449 §11.1: a short window). */
export const DPOP_MAX_AGE_S = 300;
/** Longest DPoP header we parse (an RSA-4096 proof is ~1.5 KiB; anything far larger is junk). */
export const DPOP_MAX_PROOF_CHARS = 8_192;
/** Longest `jti` we accept (RFC 9449 asks for ≥ 96 bits of randomness; 256 chars is generous). */
export const DPOP_MAX_JTI_CHARS = 256;
/** Smallest RSA modulus accepted for RS256 proofs, in bits. */
export const DPOP_MIN_RSA_BITS = 2_048;
/** The proof algorithms we verify (advertised as `dpop_signing_alg_values_supported`). */
export const DPOP_ALGS = ['ES256', 'ES384', 'EdDSA', 'RS256'] as const;
export type DpopAlg = (typeof DPOP_ALGS)[number];

/** The public JWK members RFC 7638 hashes, per key type. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'], RSA: ['e', 'kty', 'n'] };
/** Members that would make a JWK private (or symmetric): a proof carrying one is refused. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface DpopExpectation {
  /** The request's method (compared case-sensitively with `htm`, as RFC 9449 says). */
  method: string;
  /** The request's absolute URL; query and fragment are ignored. */
  url: string;
  /** The access token presented with the request, if any: the proof must carry its `ath`. */
  accessToken?: string;
  /** Now, in milliseconds since the epoch. */
  now: number;
  replay: JtiReplayStore;
}

export interface VerifiedDpopProof {
  alg: DpopAlg;
  /** RFC 7638 thumbprint (base64url SHA-256) of the proof's key. */
  jkt: string;
  jti: string;
  iat: number;
}

const invalid = (why: string) => new McpServerError('invalidDpop', `invalid DPoP proof: ${why}`);
const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(s: string, what: string): Record<string, unknown> {
  if (!s || !B64URL.test(s)) throw invalid(`${what} is not base64url`);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw invalid(`${what} is not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** base64url(SHA-256(ASCII(token))): the `ath` claim (RFC 9449 §4.2). */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url) of a public EC, OKP or RSA key. */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members = THUMBPRINT_MEMBERS[String(jwk.kty)];
  if (!members) throw invalid('unsupported key type');
  const canonical: Record<string, string> = {};
  for (const m of members) {
    if (typeof jwk[m] !== 'string') throw invalid(`jwk lacks "${m}"`);
    canonical[m] = jwk[m] as string;
  }
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

/** `htu` comparison form (RFC 9449 §4.3 step 9, RFC 3986 §6): scheme and host lower case, default port dropped, dot segments resolved, no query or fragment. */
export function normaliseHtu(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalid('htu is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid('htu is not an http(s) URL');
  return `${u.protocol}//${u.host}${u.pathname}`;
}

function keyFor(alg: DpopAlg, jwk: Record<string, unknown>): KeyObject {
  for (const m of PRIVATE_MEMBERS) if (m in jwk) throw invalid('jwk contains private key material');
  const wanted = alg === 'ES256' ? { kty: 'EC', crv: 'P-256' } : alg === 'ES384' ? { kty: 'EC', crv: 'P-384' } : alg === 'EdDSA' ? { kty: 'OKP', crv: 'Ed25519' } : { kty: 'RSA' };
  if (jwk.kty !== wanted.kty || ('crv' in wanted && jwk.crv !== wanted.crv)) throw invalid(`jwk does not fit alg ${alg}`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalid('jwk is not a valid public key');
  }
  if (alg === 'RS256' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < DPOP_MIN_RSA_BITS) throw invalid(`RSA key shorter than ${DPOP_MIN_RSA_BITS} bits`);
  return key;
}

function signatureValid(alg: DpopAlg, key: KeyObject, data: Buffer, sig: Buffer): boolean {
  try {
    if (alg === 'EdDSA') return verify(null, data, key, sig);
    if (alg === 'RS256') return verify('sha256', data, key, sig);
    const len = alg === 'ES256' ? 64 : 96;
    if (sig.length !== len) return false;
    return verify(alg === 'ES256' ? 'sha256' : 'sha384', data, { key, dsaEncoding: 'ieee-p1363' }, sig);
  } catch {
    return false;
  }
}

/**
 * Validates one DPoP header value against the request it came with. Signature and claims are
 * checked before the jti is remembered, so a forged proof cannot fill the replay store.
 */
export function verifyDpopProof(proof: string | undefined, expect: DpopExpectation): VerifiedDpopProof {
  if (typeof proof !== 'string' || proof.length === 0) throw invalid('missing DPoP header');
  if (proof.length > DPOP_MAX_PROOF_CHARS) throw invalid('proof too long');
  const parts = proof.split('.');
  if (parts.length !== 3) throw invalid('not a compact JWS');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeSegment(h, 'header');
  const claims = decodeSegment(p, 'payload');
  if (header.typ !== 'dpop+jwt') throw invalid('typ is not dpop+jwt');
  const alg = header.alg;
  if (typeof alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(alg)) throw invalid('unsupported alg');
  if ('crit' in header) throw invalid('crit is not supported');
  const jwk = header.jwk;
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw invalid('header has no jwk');
  const key = keyFor(alg as DpopAlg, jwk as Record<string, unknown>);
  if (!s || !B64URL.test(s)) throw invalid('signature is not base64url');
  if (!signatureValid(alg as DpopAlg, key, Buffer.from(`${h}.${p}`, 'ascii'), Buffer.from(s, 'base64url'))) throw invalid('bad signature');

  const { jti, htm, htu, iat } = claims;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > DPOP_MAX_JTI_CHARS) throw invalid('jti missing or too long');
  if (htm !== expect.method) throw invalid('htm does not match the request method');
  if (typeof htu !== 'string' || normaliseHtu(htu) !== normaliseHtu(expect.url)) throw invalid('htu does not match the request URL');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('iat missing');
  if (Math.abs(expect.now / 1000 - iat) > DPOP_MAX_AGE_S) throw invalid(`iat not within ${DPOP_MAX_AGE_S} s`);
  if (expect.accessToken !== undefined) {
    if (typeof claims.ath !== 'string' || claims.ath !== accessTokenHash(expect.accessToken)) throw invalid('ath does not match the access token');
  }
  const jkt = jwkThumbprint(jwk as Record<string, unknown>);
  // Kept until a replay would be refused as stale: the last millisecond `iat` is still inside the window, plus one.
  expect.replay.admit(jkt, jti, Math.ceil((iat + DPOP_MAX_AGE_S) * 1000) + 1, expect.now);
  return { alg: alg as DpopAlg, jkt, jti, iat };
}
