/** The typed errors of Vox's MCP server (domain `mcpServer`, ../protocol/wire/vox-error.ts). */
import { VoxError, type ErrorCode } from '../protocol/wire/vox-error';

export type McpServerErrorCode = ErrorCode<'mcpServer'>;

export class McpServerError extends VoxError<'mcpServer'> {
  override readonly name = 'McpServerError';
  readonly domain = 'mcpServer' as const;
  constructor(code: McpServerErrorCode, message: string, readonly details?: Record<string, unknown>) {
    super(code, message);
  }
}
