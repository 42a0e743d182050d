/**
 * The stdio transport of `vox mcp serve`: newline-delimited JSON-RPC on stdin/stdout, as MCP's
 * stdio transport specifies, written here because the SDK's `StdioServerTransport` closes the
 * whole connection when one line is over its buffer limit (the server then exited 0, silently).
 *
 * A line over MAX_STDIO_LINE_BYTES is not kept: the rest of it is skipped as it arrives (only
 * ID_PROBE_BYTES of its start and end are held, to find its id), it is answered with a JSON-RPC
 * error (-32600, its id when one is found at the top level of either end, else null) and a note
 * on stderr, and the next line is read as usual. A line that is not JSON gets -32700, one that is
 * not a JSON-RPC message -32600; neither ends the session.
 */
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Readable, Writable } from 'node:stream';

/**
 * Longest JSON-RPC line read (bytes, the newline excluded). The largest legitimate call is a
 * prompt of MAX_PROMPT_CHARS (1,000,000) characters, at most 6 bytes each once JSON-escaped
 * (`\uXXXX`): 6 MB, plus the rest of the message.
 */
export const MAX_STDIO_LINE_BYTES = 8 * 1024 * 1024;
/** Bytes kept of each end of an oversized line to find its id. */
export const ID_PROBE_BYTES = 512;

const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;
const NEWLINE = 0x0a;

type Id = string | number | null;
const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"id": …` or `{"jsonrpc":"2.0","id": …` at the start of a line. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);
/** `…,"id": …}` at the end: the member just before the outermost closing brace is a top-level one. */
const ID_AT_END = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

function probeId(head: string, tail: string): Id {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  if (!m) return null;
  try {
    const v = JSON.parse(m[1]!) as unknown;
    return typeof v === 'string' || typeof v === 'number' ? v : null;
  } catch {
    return null;
  }
}

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** The line being skipped (over the limit): its first and last bytes and how long it is so far. */
  private skipping: { head: Buffer; tail: Buffer; bytes: number } | null = null;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly note: (line: string) => void,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let start = 0; ;) {
      const nl = buf.indexOf(NEWLINE, start);
      this.take(nl === -1 ? buf.subarray(start) : buf.subarray(start, nl));
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
    }
  };

  private readonly onError = (e: Error) => this.onerror?.(e);

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += part.length;
      this.skipping.tail = Buffer.concat([this.skipping.tail, part]).subarray(-ID_PROBE_BYTES);
      return;
    }
    if (this.size + part.length <= MAX_STDIO_LINE_BYTES) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    const all = Buffer.concat([...this.chunks, part]);
    this.skipping = { head: all.subarray(0, ID_PROBE_BYTES), tail: all.subarray(-ID_PROBE_BYTES), bytes: all.length };
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): void {
    const skipped = this.skipping;
    if (skipped) {
      this.skipping = null;
      const id = probeId(skipped.head.toString('utf8'), skipped.tail.toString('utf8'));
      const message = `the message (${skipped.bytes} bytes) is larger than ${MAX_STDIO_LINE_BYTES} bytes, the most Vox reads; it was not read. Send smaller arguments.`;
      this.note(`a JSON-RPC message was refused: ${message} Still serving.`);
      this.reply(id, INVALID_REQUEST, message);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, PARSE_ERROR, 'the line is not JSON');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id;
      this.reply(typeof id === 'string' || typeof id === 'number' ? id : null, INVALID_REQUEST, 'the line is not a JSON-RPC 2.0 message');
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private reply(id: Id, code: number, message: string): void {
    void this.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.chunks = [];
    this.skipping = null;
    this.onclose?.();
  }
}
