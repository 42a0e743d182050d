#!/usr/bin/env node
// A stdio MCP server for Vox's tests (tools in ./tools.mjs). When VOX_TEST_START_LOG is set, each
// start appends a line to that file (restarts are counted by the test).
import fs from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildServer } from './tools.mjs';

if (process.env.VOX_TEST_START_LOG) fs.appendFileSync(process.env.VOX_TEST_START_LOG, `${process.pid}\n`);
if (process.env.VOX_TEST_FAIL_START) {
  process.stderr.write('refusing to start: VOX_TEST_FAIL_START\n');
  process.exit(2);
}
const server = buildServer({ name: 'vox-test-stdio' });
await server.connect(new StdioServerTransport());
