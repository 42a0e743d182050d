/**
 * The typed failure of the MCP client's OAuth sign-in is the client's own McpError (domain `mcp`):
 * a bad server name or URL (`invalidConfig`), a sign-in that did not complete (`authFailed`: timed
 * out, cancelled, refused by the authorization server). Messages never carry a code, token or secret.
 */
export { McpError } from '../errors';
