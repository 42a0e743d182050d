/**
 * Where a sign-in keeps what it must remember — the dynamic client registration, the tokens,
 * the PKCE verifier, the discovery state and the redirect port — in the host's secret store
 * (VS Code: SecretStorage) under `vox.mcp.oauth.<server>.*`, never in settings, SQLite or logs.
 * Records are bound to the server's URL: a server whose URL changed starts over.
 */
import type { HostSecretStore } from '../../host';

/** Prefix of every key (`vox.mcp.oauth.<server>.<part>`). */
export const OAUTH_SECRET_PREFIX = 'vox.mcp.oauth';
/** The parts a sign-in keeps. */
export const OAUTH_SECRET_PARTS = ['client', 'tokens', 'verifier', 'discovery', 'redirectPort'] as const;
export type OAuthSecretPart = (typeof OAUTH_SECRET_PARTS)[number];

/** The key of one part; the server name is URI-encoded so no name can reach into another's keys. */
export function oauthSecretKey(server: string, part: OAuthSecretPart): string {
  return `${OAUTH_SECRET_PREFIX}.${encodeURIComponent(server)}.${part}`;
}

/** One server's OAuth records, JSON in the secret store, each stamped with the server URL it belongs to. */
export class OAuthSecrets {
  constructor(private readonly secrets: HostSecretStore, private readonly server: string, private readonly serverUrl: string) {}

  async read<T>(part: OAuthSecretPart): Promise<T | undefined> {
    const raw = await this.secrets.get(oauthSecretKey(this.server, part));
    if (raw === undefined) return undefined;
    try {
      const rec = JSON.parse(raw) as { serverUrl?: unknown; value?: unknown };
      if (rec && rec.serverUrl === this.serverUrl && rec.value !== undefined) return rec.value as T;
    } catch {
      // A corrupt record is as good as none.
    }
    await this.delete(part);
    return undefined;
  }

  async write(part: OAuthSecretPart, value: unknown): Promise<void> {
    await this.secrets.set(oauthSecretKey(this.server, part), JSON.stringify({ serverUrl: this.serverUrl, value }));
  }

  async delete(...parts: OAuthSecretPart[]): Promise<void> {
    for (const p of parts) await this.secrets.delete(oauthSecretKey(this.server, p));
  }
}
