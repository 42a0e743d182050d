/**
 * Stateless OAuth dynamic client registration (SPEC 5.2): a client id carries its own registration,
 * `vox_<hex(payload)>.<hex(BLAKE3 keyed MAC of payload)>` with payload the canonical JSON of
 * {client_name, issued_at, redirect_uris}, so nothing is stored per client. The 32-byte MAC key
 * lives in the host's secret store (VS Code SecretStorage), created on first use. A forged or
 * altered id fails the constant-time MAC comparison → McpServerError('invalidClient').
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { blake3 } from '@noble/hashes/blake3.js';
import type { HostSecretStore } from '../../engine/host';
import { McpServerError } from './errors';

/** Secret-store key of the MAC key (hex of 32 random bytes). */
export const CLIENT_KEY_SECRET = 'vox.mcpServer.clientKey';
/** MAC key length in bytes (BLAKE3 keyed mode takes exactly 32). */
export const CLIENT_KEY_BYTES = 32;
/** Longest client id we parse (hex doubles the payload; payload ≤ MAX_REDIRECT_URIS long URIs + a name). */
export const MAX_CLIENT_ID_CHARS = 16_384;
/** Most redirect URIs one client may register. */
export const MAX_REDIRECT_URIS = 8;
/** Longest redirect URI accepted. */
export const MAX_REDIRECT_URI_CHARS = 1_024;
/** Longest client name kept (longer names are refused, not cut). */
export const MAX_CLIENT_NAME_CHARS = 200;
const PREFIX = 'vox_';

export interface ClientRegistration {
  client_name: string;
  redirect_uris: string[];
  /** Seconds since the epoch. */
  issued_at: number;
}

const invalidClient = (why: string) => new McpServerError('invalidClient', `invalid client_id: ${why}`);

/** Loads the MAC key from the secret store, creating (and storing) it on first use. */
export async function loadClientKey(secrets: HostSecretStore): Promise<Uint8Array> {
  const stored = await secrets.get(CLIENT_KEY_SECRET);
  if (stored && /^[0-9a-f]{64}$/.test(stored)) return Uint8Array.from(Buffer.from(stored, 'hex'));
  const key = randomBytes(CLIENT_KEY_BYTES);
  await secrets.set(CLIENT_KEY_SECRET, key.toString('hex'));
  return Uint8Array.from(key);
}

/** Canonical JSON of a registration: keys in lexicographic order, no whitespace. */
export function canonicalPayload(r: ClientRegistration): string {
  return JSON.stringify({ client_name: r.client_name, issued_at: r.issued_at, redirect_uris: r.redirect_uris });
}

function mac(key: Uint8Array, payload: Uint8Array): Uint8Array {
  return blake3(payload, { key });
}

/** A redirect URI a client may register: https anywhere, or http on a loopback host (RFC 8252 §7.3). No fragment. */
export function isAllowedRedirectUri(uri: string): boolean {
  if (uri.length > MAX_REDIRECT_URI_CHARS) return false;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.hash || u.username || u.password) return false;
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
}

/** Validates registration metadata (RFC 7591 request body) into a ClientRegistration, or throws invalidRequest. */
export function registrationFrom(body: unknown, issuedAt: number): ClientRegistration {
  const bad = (why: string) => new McpServerError('invalidRequest', why);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw bad('registration must be a JSON object');
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) throw bad(`redirect_uris must be 1..${MAX_REDIRECT_URIS} URIs`);
  for (const u of uris) if (typeof u !== 'string' || !isAllowedRedirectUri(u)) throw bad('redirect_uris must be https or loopback http URIs without a fragment');
  const name = b.client_name ?? 'MCP client';
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CLIENT_NAME_CHARS) throw bad(`client_name must be a string of 1..${MAX_CLIENT_NAME_CHARS} characters`);
  const method = b.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') throw bad('only public clients (token_endpoint_auth_method "none") are supported');
  return { client_name: name, redirect_uris: uris as string[], issued_at: issuedAt };
}

/** Issues the stateless client id of a registration. */
export function issueClientId(key: Uint8Array, r: ClientRegistration): string {
  const payload = Buffer.from(canonicalPayload(r), 'utf8');
  return `${PREFIX}${payload.toString('hex')}.${Buffer.from(mac(key, payload)).toString('hex')}`;
}

/** Verifies a client id's MAC (constant time) and returns the registration it carries. */
export function verifyClientId(key: Uint8Array, clientId: unknown): ClientRegistration {
  if (typeof clientId !== 'string' || clientId.length === 0) throw invalidClient('missing');
  if (clientId.length > MAX_CLIENT_ID_CHARS) throw invalidClient('too long');
  const m = /^vox_((?:[0-9a-f]{2})+)\.([0-9a-f]{64})$/.exec(clientId);
  if (!m) throw invalidClient('malformed');
  const payload = Buffer.from(m[1]!, 'hex');
  const given = Buffer.from(m[2]!, 'hex');
  const expected = Buffer.from(mac(key, Uint8Array.from(payload)));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidClient('MAC does not verify');
  let r: unknown;
  try {
    r = JSON.parse(payload.toString('utf8'));
  } catch {
    throw invalidClient('payload is not JSON');
  }
  const o = r as Partial<ClientRegistration> | null;
  if (!o || typeof o.client_name !== 'string' || typeof o.issued_at !== 'number' || !Array.isArray(o.redirect_uris) || !o.redirect_uris.every((u) => typeof u === 'string')) {
    throw invalidClient('payload has the wrong shape');
  }
  return { client_name: o.client_name, redirect_uris: o.redirect_uris, issued_at: o.issued_at };
}
