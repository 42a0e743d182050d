// The tools, prompts and resources of Vox's test MCP servers (../mcp/stdio-server.mjs, http-server.ts),
// written with the official SDK's McpServer. Each mode is a real behaviour a server can have:
// a read-only and a mutating tool, one that hangs, one that kills its own process mid-call, one
// returning 5 MB, the process env, UI resources (MCP Apps), a slow one (concurrency), and one that
// adds a tool (listChanged).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** Size of the `big` tool's result. */
export const BIG_RESULT_CHARS = 5 * 1024 * 1024;
export const WIDGET_HTML = '<!doctype html><html><body><h1 id="w">Weather widget</h1></body></html>';

export function buildServer(opts = {}) {
  const server = new McpServer({ name: opts.name ?? 'vox-test', version: '1.0.0' }, { capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} } });
  server.registerTool('echo', {
    description: 'Echoes the message back.', inputSchema: { message: z.string() }, annotations: { readOnlyHint: true },
  }, async ({ message }) => ({ content: [{ type: 'text', text: `echo: ${message}` }] }));
  server.registerTool('write_note', {
    description: 'Pretends to write a note (not read-only).', inputSchema: { text: z.string() },
  }, async ({ text }) => ({ content: [{ type: 'text', text: `wrote note: ${text}` }] }));
  server.registerTool('hang', { description: 'Never answers.', annotations: { readOnlyHint: true } }, () => new Promise(() => undefined));
  // Never in a server that lives in the test's own process (the HTTP ones).
  if (!opts.inProcess) server.registerTool('crash', { description: 'Kills its own process mid-call.', annotations: { readOnlyHint: true } }, async () => {
    setTimeout(() => process.exit(3), 10);
    return new Promise(() => undefined);
  });
  server.registerTool('big', { description: 'Returns 5 MB of text.', annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: 'x'.repeat(BIG_RESULT_CHARS - 4) + 'TAIL' }],
  }));
  server.registerTool('env', { description: 'Reports its process environment as JSON.', annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({ env: process.env, cwd: process.cwd(), pid: process.pid }) }],
  }));
  server.registerTool('slow', {
    description: 'Answers after `ms` milliseconds.', inputSchema: { ms: z.number(), tag: z.string() }, annotations: { readOnlyHint: true },
  }, async ({ ms, tag }) => {
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: `slow done: ${tag} pid ${process.pid}` }] };
  });
  server.registerTool('widget', { description: 'Returns an MCP App (embedded UI resource).', annotations: { readOnlyHint: true } }, async () => ({
    content: [
      { type: 'text', text: 'Sunny, 21 °C' },
      { type: 'resource', resource: { uri: 'ui://test/widget', mimeType: 'text/html;profile=mcp-app', text: WIDGET_HTML } },
    ],
  }));
  server.registerTool('widget_meta', {
    description: 'Declares its UI resource in _meta.ui.resourceUri.', annotations: { readOnlyHint: true }, _meta: { ui: { resourceUri: 'ui://test/meta-widget' } },
  }, async () => ({ content: [{ type: 'text', text: 'see the view' }] }));
  server.registerResource('meta-widget', 'ui://test/meta-widget', { mimeType: 'text/html;profile=mcp-app' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/html;profile=mcp-app', text: WIDGET_HTML.replace('Weather', 'Meta') }],
  }));
  server.registerResource('readme', 'note://readme', { description: 'The project notes', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'NOTES: the launch is on Friday.' }],
  }));
  server.registerPrompt('review', { description: 'Review a file', argsSchema: { file: z.string() } }, ({ file }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please review ${file} carefully.` } }],
  }));
  server.registerTool('add_tool', { description: 'Adds a tool named `added` (listChanged).', annotations: { readOnlyHint: true } }, async () => {
    if (!server.isConnected()) return { content: [{ type: 'text', text: 'not connected' }] };
    server.registerTool('added', { description: 'Added at run time.', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'added works' }] }));
    return { content: [{ type: 'text', text: 'added' }] };
  });
  return server;
}
