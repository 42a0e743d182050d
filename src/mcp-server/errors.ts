/** The typed errors of Vox's MCP server (domain `mcpServer`, ../protocol/wire/vox-error.ts). */
import { VoxError, type ErrorCode } from '../protocol/wire/vox-error';

export class McpServerError extends VoxError<'mcpServer'> {
  readonly domain = 'mcpServer' as const;
  constructor(code: ErrorCode<'mcpServer'>, message: string, readonly details?: Record<string, unknown>) {
    super(code, message);
  }
}
