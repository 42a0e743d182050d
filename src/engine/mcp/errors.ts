/**
 * McpError: every typed failure of Vox as an MCP client (config files, connections, calls,
 * sign-in), domain `mcp` (../../protocol/wire/vox-error.ts). The SDK's own errors never reach a
 * user raw: `fromSdkError` maps them to one of these codes with Vox's words.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export type McpErrorCode = ErrorCode<'mcp'>;

export class McpError extends VoxError<'mcp'> {
  override readonly name = 'McpError';
  readonly domain = 'mcp' as const;
  constructor(code: McpErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
