/**
 * The authorisation server's short-lived state, in memory only: authorisation codes (one use,
 * PKCE-bound), DPoP-bound access tokens and rotating refresh tokens. Tokens are opaque random
 * strings (256 bits) looked up by their SHA-256, so nothing here can be replayed after the
 * extension host stops (a client then signs in again; its grant is remembered in grants.ts).
 * Every table is bounded: when full, the oldest entry goes first.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Access-token lifetime (seconds): short, a client refreshes with its DPoP key. */
export const ACCESS_TOKEN_TTL_S = 600;
/** Refresh-token lifetime (seconds); each use rotates it. */
export const REFRESH_TOKEN_TTL_S = 7 * 24 * 3_600;
/** Authorisation-code lifetime (seconds; RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const AUTH_CODE_TTL_S = 60;
/** Most live entries per table (codes, access tokens, refresh tokens). */
export const MAX_LIVE_TOKENS = 1_000;
/** Random bytes per token or code. */
const TOKEN_BYTES = 32;

export type McpGrant = 'readOnly' | 'default' | 'fullAccess';
export const MCP_GRANTS: readonly McpGrant[] = ['readOnly', 'default', 'fullAccess'];

/** Who a token speaks for: the client (its stateless id and name), the grant the user chose, the DPoP key it is bound to. */
export interface TokenSubject {
  clientId: string;
  clientName: string;
  grant: McpGrant;
}

export interface AuthCode extends TokenSubject {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

export interface BoundToken extends TokenSubject {
  /** RFC 7638 thumbprint of the DPoP key (`cnf.jkt`). */
  jkt: string;
  expiresAt: number;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

const digest = (t: string) => createHash('sha256').update(t).digest('hex');
const fresh = () => randomBytes(TOKEN_BYTES).toString('base64url');

class BoundedTable<V extends { expiresAt: number }> {
  private readonly rows = new Map<string, V>();
  put(secret: string, v: V): void {
    const k = digest(secret);
    this.rows.delete(k);
    this.rows.set(k, v);
    while (this.rows.size > MAX_LIVE_TOKENS) this.rows.delete(this.rows.keys().next().value as string);
  }
  get(secret: string, now: number): V | undefined {
    const k = digest(secret);
    const v = this.rows.get(k);
    if (v && v.expiresAt <= now) {
      this.rows.delete(k);
      return undefined;
    }
    return v;
  }
  take(secret: string, now: number): V | undefined {
    const v = this.get(secret, now);
    this.rows.delete(digest(secret));
    return v;
  }
  clear(): void {
    this.rows.clear();
  }
}

export class TokenTable {
  private readonly codes = new BoundedTable<AuthCode>();
  private readonly access = new BoundedTable<BoundToken>();
  private readonly refresh = new BoundedTable<BoundToken>();
  constructor(private readonly now: () => number) {}

  issueCode(subject: TokenSubject, redirectUri: string, codeChallenge: string): string {
    const code = fresh();
    this.codes.put(code, { ...subject, redirectUri, codeChallenge, expiresAt: this.now() + AUTH_CODE_TTL_S * 1000 });
    return code;
  }

  /** A code is used at most once, whether the exchange then succeeds or not. */
  takeCode(code: string): AuthCode | undefined {
    return this.codes.take(code, this.now());
  }

  issueTokens(subject: TokenSubject, jkt: string): IssuedTokens {
    const accessToken = fresh();
    const refreshToken = fresh();
    const now = this.now();
    const s = { clientId: subject.clientId, clientName: subject.clientName, grant: subject.grant, jkt };
    this.access.put(accessToken, { ...s, expiresAt: now + ACCESS_TOKEN_TTL_S * 1000 });
    this.refresh.put(refreshToken, { ...s, expiresAt: now + REFRESH_TOKEN_TTL_S * 1000 });
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_S };
  }

  accessToken(token: string): BoundToken | undefined {
    return this.access.get(token, this.now());
  }

  /** Refresh tokens rotate: taking one consumes it. */
  takeRefresh(token: string): BoundToken | undefined {
    return this.refresh.take(token, this.now());
  }

  clear(): void {
    this.codes.clear();
    this.access.clear();
    this.refresh.clear();
  }
}
