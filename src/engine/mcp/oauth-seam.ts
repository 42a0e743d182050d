/**
 * The seam to OAuth sign-in of HTTP MCP servers (./oauth/, written separately): the shape of
 * `createMcpOAuthProvider` and of the session it returns. The manager takes the factory by
 * injection (EngineConfig.mcpOAuth), so the client works — and is tested — without it: a server
 * answering 401 is then `needsAuth`, and signing in says that it is not available in this build.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { HostSecretStore } from '../host';

export interface McpOAuthSession {
  /** Passed as `authProvider` to the HTTP transports. */
  provider: OAuthClientProvider;
  /** The authorization code from the redirect, once the user signed in in the browser. */
  waitForCode(signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export type McpOAuthFactory = (opts: { server: string; serverUrl: string; secrets: HostSecretStore; openUrl: (url: string) => Promise<void> }) => Promise<McpOAuthSession>;
