/**
 * MCP Apps in the chat (SPEC 5.3, the MCP Apps extension SEP-1865): what the sandboxed frame of
 * an app is given and how its messages are read. Pure; McpApp.svelte does the DOM.
 *
 * The frame: `sandbox="allow-scripts"` only (an opaque origin: no same-origin, no top
 * navigation, no popups, no forms) and `srcdoc` = the app's HTML with a strict CSP meta first
 * (`APP_CSP`: nothing from the network, inline script and style only, images from data: only).
 * A srcdoc document also inherits the chat's own CSP (scripts and styles only by nonce), so every
 * `<script>` and `<style>` of the app gets the chat's nonce: both policies hold, the stricter wins.
 * The nonce gives the app nothing: its opaque origin cannot reach the chat's document.
 *
 * The bridge is postMessage only, JSON-RPC 2.0 (`parseAppMessage`): from the app, `ui/initialize`
 * (answered with the host context: theme, VS Code's colours as the spec's style variables, the
 * saved state), `ui/notifications/initialized` (then the host sends the tool's input and result),
 * `ui/notifications/size-changed` (the frame's height, within MCP_APP_MIN/MAX_HEIGHT_PX),
 * `ui/update-model-context` and `vox/saveState` (the state, ≤ MCP_APP_STATE_MAX_BYTES of UTF-8,
 * saved through `setMcpAppState`), `vox/getState`. Other requests are answered "method not
 * found"; anything else — and every message whose source is not the app's own frame — is ignored.
 */
import { MCP_APP_STATE_MAX_BYTES, utf8ByteLength } from '../../../src/protocol/mcp-apps';

/** The CSP every app document carries (its own meta, first in the document). */
export const APP_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";
/** The frame's only sandbox permission. */
export const APP_SANDBOX = 'allow-scripts';
/** The frame's height before the app reports its size, and the bounds of what it may ask for (CSS px). */
export const MCP_APP_DEFAULT_HEIGHT_PX = 160;
export const MCP_APP_MIN_HEIGHT_PX = 40;
export const MCP_APP_MAX_HEIGHT_PX = 640;
/** The MCP Apps protocol version the host speaks. */
export const MCP_APPS_PROTOCOL_VERSION = '2026-01-26';
/** JSON-RPC error codes the bridge answers with. */
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The app's HTML as the frame's srcdoc: the CSP meta first (after a doctype), the chat's nonce on every script and style tag. */
export function appDocument(html: string, nonce: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttr(APP_CSP)}">`;
  const withNonce = nonce ? html.replace(/<(script|style)(?=[\s>/])/gi, (_m, tag: string) => `<${tag} nonce="${escapeAttr(nonce)}"`) : html;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(withNonce);
  return doctype ? `${doctype[0]}${meta}${withNonce.slice(doctype[0].length)}` : `<!doctype html>${meta}${withNonce}`;
}

/** The frame's height for a size the app reported (bounded; a non-number keeps `current`). */
export function boundedHeight(height: unknown, current: number): number {
  if (typeof height !== 'number' || !Number.isFinite(height)) return current;
  return Math.round(Math.min(MCP_APP_MAX_HEIGHT_PX, Math.max(MCP_APP_MIN_HEIGHT_PX, height)));
}

export type AppMessage =
  | { kind: 'initialize'; id: string | number }
  | { kind: 'initialized' }
  | { kind: 'sizeChanged'; height: unknown }
  | { kind: 'saveState'; id: string | number | null; state: string }
  | { kind: 'badState'; id: string | number | null; message: string }
  | { kind: 'getState'; id: string | number }
  | { kind: 'unknownRequest'; id: string | number; method: string };

const isId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** The state an `ui/update-model-context` request carries: its content blocks and structured content, as JSON text. */
function modelContextState(params: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  if (params.content !== undefined) out.content = params.content;
  if (params.structuredContent !== undefined) out.structuredContent = params.structuredContent;
  return JSON.stringify(out);
}

/** One message from the app's frame, or null for anything the bridge ignores (not JSON-RPC 2.0, a response, an unknown notification). */
export function parseAppMessage(data: unknown): AppMessage | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const m = data as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return null;
  const id = isId(m.id) ? m.id : null;
  const params = typeof m.params === 'object' && m.params !== null && !Array.isArray(m.params) ? (m.params as Record<string, unknown>) : {};
  switch (m.method) {
    case 'ui/initialize':
      return id === null ? null : { kind: 'initialize', id };
    case 'ui/notifications/initialized':
      return { kind: 'initialized' };
    case 'ui/notifications/size-changed':
      return { kind: 'sizeChanged', height: params.height };
    case 'ui/update-model-context': {
      try {
        return { kind: 'saveState', id, state: modelContextState(params) };
      } catch {
        return { kind: 'badState', id, message: 'the model context is not JSON' };
      }
    }
    case 'vox/saveState':
      return typeof params.state === 'string' ? { kind: 'saveState', id, state: params.state } : { kind: 'badState', id, message: 'params.state must be a string' };
    case 'vox/getState':
      return id === null ? null : { kind: 'getState', id };
    default:
      return id === null ? null : { kind: 'unknownRequest', id, method: m.method };
  }
}

/** A state too large for the engine, told before it is sent (the engine checks again). */
export function stateTooLarge(state: string): string | null {
  const bytes = utf8ByteLength(state);
  return bytes > MCP_APP_STATE_MAX_BYTES ? `the state is ${bytes} bytes of UTF-8; an app may keep at most ${MCP_APP_STATE_MAX_BYTES}` : null;
}

/** The spec's style variables, from VS Code's theme variables (read from the chat's computed style). */
export const STYLE_VARIABLES: Record<string, string> = {
  '--color-background-primary': '--vscode-editor-background',
  '--color-background-secondary': '--vscode-sideBar-background',
  '--color-text-primary': '--vscode-foreground',
  '--color-text-secondary': '--vscode-descriptionForeground',
  '--color-border-primary': '--vscode-panel-border',
  '--color-ring-primary': '--vscode-focusBorder',
  '--font-sans': '--vscode-font-family',
  '--font-mono': '--vscode-editor-font-family',
};

export interface HostContextInput {
  theme: 'light' | 'dark';
  /** A VS Code variable name → its value now. */
  readVar: (name: string) => string;
  toolName: string;
  state: string | null;
}

/** The `ui/initialize` result: protocol version, host info and capabilities, and the host context. */
export function initializeResult(input: HostContextInput): Record<string, unknown> {
  const variables: Record<string, string> = {};
  for (const [spec, vscodeVar] of Object.entries(STYLE_VARIABLES)) {
    const v = input.readVar(vscodeVar).trim();
    if (v) variables[spec] = v;
  }
  return {
    protocolVersion: MCP_APPS_PROTOCOL_VERSION,
    hostInfo: { name: 'Vox', version: '0.1.0' },
    hostCapabilities: { updateModelContext: {} },
    hostContext: {
      theme: input.theme,
      styles: { variables },
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      containerDimensions: { maxHeight: MCP_APP_MAX_HEIGHT_PX },
      toolInfo: { tool: { name: input.toolName } },
      /** Vox: the state the app saved for this turn item (null: none yet). */
      'vox/state': input.state,
    },
  };
}
