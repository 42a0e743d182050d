/**
 * The typed error of Vox's MCP server over HTTP (domain `mcpServer`): DPoP proofs, client ids,
 * grants and tokens. Every failure of the HTTP layer is one of these before it becomes an HTTP
 * answer, so no raw library error (or its stack) ever reaches a client.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export type McpServerErrorCode = ErrorCode<'mcpServer'>;

export class McpServerError extends VoxError<'mcpServer'> {
  readonly domain = 'mcpServer' as const;
  constructor(code: McpServerErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'McpServerError';
  }
}

export function isMcpServerError(e: unknown): e is McpServerError {
  return e instanceof McpServerError;
}
