/**
 * The stdio line transport of `vox mcp serve` (src/mcp-server/stdio-lines.ts) over real streams:
 * messages split across chunks and several in one chunk are delivered in order; a line over the
 * limit, arriving in many chunks, is answered -32600 with its top-level id (found at its start or
 * its end, never a nested one) or null, and the next line is read as usual; non-JSON and
 * non-JSON-RPC lines get -32700 / -32600 and the session goes on.
 */
import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_STDIO_LINE_BYTES, StdioLineTransport } from '../../src/mcp-server/stdio-lines';
import { waitFor } from '../support/wait';

function harness() {
  const input = new PassThrough();
  const output = new PassThrough();
  const notes: string[] = [];
  let out = '';
  output.on('data', (d) => (out += String(d)));
  const got: JSONRPCMessage[] = [];
  const t = new StdioLineTransport(input, output, (l) => notes.push(l));
  t.onmessage = (m) => got.push(m);
  const replies = () => out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
  /** Until the input's last line (a ping of `lastId`) was delivered: everything before it was handled. */
  const through = (lastId: number) => waitFor(`ping ${lastId}`, 20_000, () => got.some((m) => (m as { id?: unknown }).id === lastId), 5);
  return { input, t, got, notes, replies, through };
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

describe('MCP server: the stdio line transport', () => {
  it('delivers messages split across chunks and several in one chunk, in order', async () => {
    const h = harness();
    await h.t.start();
    const two = ping(1) + ping(2);
    h.input.write(two.slice(0, 7));
    h.input.write(two.slice(7, 40));
    h.input.write(two.slice(40) + ping(3).slice(0, 3));
    h.input.write(`${ping(3).slice(3, -1)}\r\n`);
    await h.through(3);
    assert.deepEqual(h.got.map((m) => (m as { id: number }).id), [1, 2, 3]);
    assert.deepEqual(h.replies(), []);
  });

  it('an oversized line in many chunks: -32600 with its top-level id (start or end), null when none; the next line is read', async () => {
    const h = harness();
    await h.t.start();
    const filler = 'y'.repeat(MAX_STDIO_LINE_BYTES);
    const send = (line: string) => {
      for (let i = 0; i < line.length; i += 1 << 20) h.input.write(line.slice(i, i + (1 << 20)));
      h.input.write('\n');
    };
    send(JSON.stringify({ jsonrpc: '2.0', id: 'at-start', method: 'tools/call', params: { q: filler } }));
    send(JSON.stringify({ method: 'tools/call', params: { q: filler, nested: { id: 99 } }, jsonrpc: '2.0', id: 41 }));
    send(JSON.stringify({ method: 'tools/call', params: { q: filler, nested: { id: 99 } } }));
    h.input.write(ping(7));
    await h.through(7);
    const r = h.replies();
    assert.deepEqual(r.map((x) => [x.id, x.error?.code]), [['at-start', -32600], [41, -32600], [null, -32600]]);
    assert.match(r[0]!.error!.message, new RegExp(`larger than ${MAX_STDIO_LINE_BYTES} bytes`));
    assert.deepEqual(h.got.map((m) => (m as { id: number }).id), [7], 'the line after them is read as usual');
    assert.equal(h.notes.length, 3);
  });

  it('a line that is not JSON gets -32700, one that is not JSON-RPC -32600 (with its id); neither ends the session', async () => {
    const h = harness();
    let closed = false;
    h.t.onclose = () => (closed = true);
    await h.t.start();
    h.input.write('{not json\n');
    h.input.write(`${JSON.stringify({ id: 5, hello: 'world' })}\n`);
    h.input.write('\n');
    h.input.write(ping(6));
    await h.through(6);
    assert.deepEqual(h.replies().map((x) => [x.id, x.error?.code]), [[null, -32700], [5, -32600]]);
    assert.deepEqual(h.got.map((m) => (m as { id: number }).id), [6]);
    assert.equal(closed, false);
    await h.t.close();
    assert.equal(closed, true);
  });
});
