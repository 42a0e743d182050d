/**
 * The typed failure of the MCP client's OAuth sign-in (domain `mcp`): a bad server name or URL
 * (`invalidConfig`), a sign-in that did not complete (`authFailed`: timed out, cancelled, refused
 * by the authorization server). Messages never carry a code, token or secret.
 * (If the MCP client (../) defines its own McpError, this module re-exports that one instead.)
 */
import { VoxError, type ErrorCode } from '../../../protocol/wire/vox-error';

export class McpError extends VoxError<'mcp'> {
  override readonly name = 'McpError';
  readonly domain = 'mcp' as const;
  constructor(code: ErrorCode<'mcp'>, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
