/**
 * The HTTP layer's typed errors are the MCP server's McpServerError (domain `mcpServer`, ../errors.ts):
 * DPoP proofs, client ids, grants and tokens. Every failure of the HTTP layer is one of these before
 * it becomes an HTTP answer, so no raw library error (or its stack) ever reaches a client.
 */
import { McpServerError } from '../errors';

export { McpServerError };
export type { McpServerErrorCode } from '../errors';

export function isMcpServerError(e: unknown): e is McpServerError {
  return e instanceof McpServerError;
}
