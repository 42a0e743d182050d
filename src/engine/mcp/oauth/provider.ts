/**
 * OAuth sign-in of the MCP client to HTTP servers that require it: an
 * `OAuthClientProvider` of the official SDK (authorization code + PKCE, dynamic client
 * registration, refresh) whose registration, tokens and verifier live only in the host's secret
 * store (./secrets.ts), with a loopback redirect listener (./loopback.ts) that receives the code.
 * The MCP client (../) creates one session per sign-in-capable server and gives `provider` to the
 * SDK's HTTP transport; on 401 the SDK refreshes or calls `redirectToAuthorization`, which opens
 * the browser (`openUrl`); `waitForCode` then yields the code for `transport.finishAuth(code)`.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { HostSecretStore } from '../../host';
import { McpError } from './errors';
import { startLoopbackCallback } from './loopback';
import { OAuthSecrets } from './secrets';

/** Random bytes of an OAuth `state` (base64url). */
const STATE_BYTES = 32;
/** The name Vox registers under. */
const CLIENT_NAME = 'Vox';
/** Longest server name accepted (it becomes part of secret keys and of the sign-in page). */
const MAX_SERVER_NAME_CHARS = 200;

export interface McpOAuthSession {
  provider: OAuthClientProvider;
  /** The authorization code the browser brings back to the loopback listener; `mcp/authFailed` on abort, timeout or refusal. */
  waitForCode(signal: AbortSignal): Promise<string>;
  /** Stops the loopback listener (a pending wait fails with `mcp/authFailed`). */
  close(): Promise<void>;
}

type DiscoveryState = NonNullable<Awaited<ReturnType<NonNullable<OAuthClientProvider['discoveryState']>>>>;

function checkOptions(server: string, serverUrl: string): void {
  if (typeof server !== 'string' || server.length === 0 || server.length > MAX_SERVER_NAME_CHARS) {
    throw new McpError('invalidConfig', `An MCP server name must be 1–${MAX_SERVER_NAME_CHARS} characters.`);
  }
  let url: URL;
  try {
    url = new URL(serverUrl);
  } catch {
    throw new McpError('invalidConfig', `The URL of MCP server ${server} is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpError('invalidConfig', `MCP server ${server}: OAuth sign-in needs an http(s) URL, not ${url.protocol}`);
}

/**
 * A sign-in session for MCP server `server` at `serverUrl`: starts the loopback listener (on the
 * port registered last time when it is free) and returns the SDK provider over `secrets`.
 */
export async function createMcpOAuthProvider(opts: { server: string; serverUrl: string; secrets: HostSecretStore; openUrl: (url: string) => Promise<void> }): Promise<McpOAuthSession> {
  const { server, serverUrl, openUrl } = opts;
  checkOptions(server, serverUrl);
  const store = new OAuthSecrets(opts.secrets, server, serverUrl);
  const lastPort = await store.read<number>('redirectPort');
  const loopback = await startLoopbackCallback(server, typeof lastPort === 'number' && Number.isInteger(lastPort) && lastPort > 0 && lastPort < 65536 ? lastPort : undefined);
  await store.write('redirectPort', loopback.port);
  const redirectUrl = loopback.redirectUrl;
  const clientMetadata: OAuthClientMetadata = {
    client_name: CLIENT_NAME,
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };

  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return clientMetadata;
    },
    state() {
      const state = randomBytes(STATE_BYTES).toString('base64url');
      loopback.expect(state);
      return state;
    },
    async clientInformation() {
      const info = await store.read<OAuthClientInformationMixed>('client');
      if (!info) return undefined;
      const uris = (info as { redirect_uris?: unknown }).redirect_uris;
      if (Array.isArray(uris) && !uris.includes(redirectUrl)) {
        // Registered for another redirect port: register again; its tokens belong to the old client.
        await store.delete('client', 'tokens');
        return undefined;
      }
      return info;
    },
    async saveClientInformation(info) {
      await store.write('client', info);
    },
    async tokens() {
      return store.read<OAuthTokens>('tokens');
    },
    async saveTokens(tokens) {
      await store.write('tokens', tokens);
      await store.delete('verifier'); // single use: the code it proved is spent
    },
    async redirectToAuthorization(url) {
      try {
        await openUrl(url.toString());
      } catch (e) {
        throw new McpError('authFailed', `Could not open the browser to sign in to ${server}: ${(e as Error).message ?? String(e)}`);
      }
    },
    async saveCodeVerifier(verifier) {
      await store.write('verifier', verifier);
    },
    async codeVerifier() {
      const v = await store.read<string>('verifier');
      if (typeof v !== 'string') throw new McpError('authFailed', `No sign-in to ${server} is in progress (its PKCE verifier is missing); sign in again.`);
      return v;
    },
    async invalidateCredentials(scope) {
      if (scope === 'all') await store.delete('client', 'tokens', 'verifier', 'discovery');
      else if (scope === 'client') await store.delete('client');
      else if (scope === 'tokens') await store.delete('tokens');
      else if (scope === 'verifier') await store.delete('verifier');
      else await store.delete('discovery');
    },
    async saveDiscoveryState(state) {
      await store.write('discovery', state);
    },
    async discoveryState() {
      return store.read<DiscoveryState>('discovery');
    },
  };

  return {
    provider,
    waitForCode: (signal) => loopback.waitForCode(signal),
    close: () => loopback.close(),
  };
}
