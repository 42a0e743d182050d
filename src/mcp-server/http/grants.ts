/**
 * The grant the user chose for an MCP client on its first connection, remembered per client id in
 * the host's secret store (`vox.mcpServer.grant.<hash of the client id>`), and one prompt at a
 * time per client: concurrent authorisations of the same client wait for the same answer.
 * A refusal is not remembered (the next attempt asks again).
 */
import { blake3 } from '@noble/hashes/blake3.js';
import type { HostSecretStore } from '../../engine/host';
import { MCP_GRANTS, type McpGrant } from './tokens';

/** Prefix of the secret-store key holding one client's grant. */
export const GRANT_SECRET_PREFIX = 'vox.mcpServer.grant.';
/** Most distinct clients waiting for the user's answer at once (more are told to retry later). */
export const MAX_PENDING_GRANT_PROMPTS = 4;

export interface GrantRequest {
  clientName: string;
  redirectUri: string;
}
export type ChooseGrant = (client: GrantRequest) => Promise<McpGrant | null>;

export function grantSecretKey(clientId: string): string {
  return GRANT_SECRET_PREFIX + Buffer.from(blake3(Buffer.from(clientId, 'utf8'), { dkLen: 16 })).toString('hex');
}

export class GrantMemory {
  private readonly pending = new Map<string, Promise<McpGrant | null>>();
  constructor(
    private readonly secrets: HostSecretStore,
    private readonly choose: ChooseGrant,
  ) {}

  async remembered(clientId: string): Promise<McpGrant | undefined> {
    const v = await this.secrets.get(grantSecretKey(clientId));
    return (MCP_GRANTS as readonly string[]).includes(v ?? '') ? (v as McpGrant) : undefined;
  }

  /** The remembered grant, or the user's choice (remembered when not a refusal); 'busy' when too many prompts are open. */
  async grantFor(clientId: string, client: GrantRequest): Promise<McpGrant | null | 'busy'> {
    const known = await this.remembered(clientId);
    if (known) return known;
    let p = this.pending.get(clientId);
    if (!p) {
      if (this.pending.size >= MAX_PENDING_GRANT_PROMPTS) return 'busy';
      p = this.ask(clientId, client).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, p);
    }
    return p;
  }

  private async ask(clientId: string, client: GrantRequest): Promise<McpGrant | null> {
    let choice: McpGrant | null;
    try {
      choice = await this.choose(client);
    } catch {
      choice = null;
    }
    if (choice === null || !MCP_GRANTS.includes(choice)) return null;
    await this.secrets.set(grantSecretKey(clientId), choice);
    return choice;
  }
}
