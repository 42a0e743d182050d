/** McpAppError: the typed failures of MCP Apps (SPEC 5.3): oversize or malformed state, an unknown item, an item without an app. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ErrorDetailsOf } from '../../protocol/wire/error-details';

export class McpAppError extends VoxError<'mcpApp'> {
  override readonly name = 'McpAppError';
  readonly domain = 'mcpApp' as const;
  constructor(code: ErrorCode<'mcpApp'>, message: string, readonly details?: ErrorDetailsOf<'mcpApp'>) {
    super(code, message);
  }
}
