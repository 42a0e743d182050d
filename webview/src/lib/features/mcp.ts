/**
 * MCP servers in the composer (SPEC 5.3): their prompts as slash commands and their resources in
 * the @-popup, under `mcp` (../mcp-state.ts). The server list comes with `listMcpServers` and
 * then `mcpServers` updates (`watchMcpServers`), asked for at start and for every new engine
 * session; a prompt's text comes with `getMcpPrompt`. Without an MCP client: no prompts, no notice.
 */
import { McpController, createMcpModel } from '../mcp-state';
import { defineFeature } from './feature';

export const mcpFeature = defineFeature({
  name: 'mcp',
  install(ctx) {
    const m = ctx.model;
    m.mcp ??= createMcpModel(); // read back below: through the $state proxy, so the slash menu is reactive
    /** MCP prompts as slash commands, resources in the @-popup (../mcp-state.ts). */
    const mcp = new McpController(m.mcp, { send: (c) => ctx.send(c), draft: () => m.draft, setDraft: (t) => (m.draft = t), notify: (code, message) => ctx.notify(code, message) });
    return {
      intents: { mcp },
      updates: {
        mcpServers: (u) => mcp.onServers(u),
      },
      results: {
        listMcpServers: (value, _req, inReplyTo) => void mcp.onResult(inReplyTo, 'listMcpServers', value),
        watchMcpServers: (value, _req, inReplyTo) => void mcp.onResult(inReplyTo, 'watchMcpServers', value),
        getMcpPrompt: (value, _req, inReplyTo) => void mcp.onResult(inReplyTo, 'getMcpPrompt', value),
      },
      errors: {
        listMcpServers: (u) => mcp.onError(u.inReplyTo, 'listMcpServers', u.message),
        watchMcpServers: (u) => mcp.onError(u.inReplyTo, 'watchMcpServers', u.message),
        getMcpPrompt: (u) => mcp.onError(u.inReplyTo, 'getMcpPrompt', u.message),
      },
      start: () => mcp.start(),
      reconnected: () => mcp.start(),
    };
  },
});
