/**
 * `read_file`: returns a text file (or a line range of it) to the model. Reads stream in chunks so
 * a range near the start of a huge file costs little; output is capped in bytes with a notice that
 * says how to continue. Binary files are refused, and so are FIFOs, sockets and devices, which are
 * never opened. The file is opened once, race-free (./confined-fs.ts), and every read goes through
 * that descriptor. The output budget, binary sniff and surrogate-safe cut it shares with the other
 * tools live in ./text.ts.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { ToolDefinition } from './schema';
import { openInWorkspace, specialFileMessage } from './confined-fs';
import { BINARY_SNIFF_BYTES, TOOL_OUTPUT_BUDGET_CHARS, binaryReason } from './text';
import { ToolError, type ToolResult } from './types';

/** Most UTF-8 bytes of file text returned by one read_file call (bytes ≥ characters, so within budget). */
export const READ_FILE_MAX_BYTES = TOOL_OUTPUT_BUDGET_CHARS;
/** Chunk size of the streaming line reader. */
const READ_CHUNK_BYTES = 64 * 1024;

export interface ReadFileArgs {
  path: string;
  startLine?: number;
  endLine?: number;
}

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
function cutUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // back off continuation bytes
  return buf.subarray(0, end).toString('utf8');
}

interface LineRead {
  lines: string[];
  /** Output stopped because of READ_FILE_MAX_BYTES. */
  capped: boolean;
  /** The only line shown was longer than the cap and is cut short. */
  cutLine: boolean;
  /** The whole file was scanned (the range reached or passed its end). */
  reachedEof: boolean;
  /** Lines in the file (a final line without newline counts); exact only when `reachedEof`. */
  linesSeen: number;
}

/** Streams the open file `fh` from its start, collecting lines `startLine..endLine` (1-based, inclusive) up to the byte cap. */
async function readLineRange(fh: FileHandle, startLine: number, endLine: number | undefined): Promise<LineRead> {
  const r: LineRead = { lines: [], capped: false, cutLine: false, reachedEof: false, linesSeen: 0 };
  let position = 0;
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.alloc(READ_CHUNK_BYTES);
  let bytes = 0;
  let lineNo = 1; // number of the line being assembled
  let current = ''; // its text so far (kept only inside the range)
  let midLine = false; // characters seen after the last newline
  let first = true;
  // Adds line `lineNo` if in range; returns true when collection must stop.
  const take = (line: string): boolean => {
    if (lineNo < startLine) return false;
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    const cost = Buffer.byteLength(text, 'utf8') + 1;
    if (bytes + cost > READ_FILE_MAX_BYTES) {
      if (r.lines.length === 0) {
        r.lines.push(cutUtf8(text, READ_FILE_MAX_BYTES));
        r.cutLine = true;
      }
      r.capped = true;
      return true;
    }
    r.lines.push(text);
    bytes += cost;
    return endLine !== undefined && lineNo >= endLine;
  };
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    position += bytesRead;
    let text = bytesRead > 0 ? decoder.write(buf.subarray(0, bytesRead)) : decoder.end();
    if (first && text.length > 0) {
      if (text.startsWith('\uFEFF')) text = text.slice(1);
      first = false;
    }
    const pieces = text.split('\n');
    for (let i = 0; i < pieces.length - 1; i++) {
      if (take(current + pieces[i])) return r;
      current = '';
      lineNo++;
      midLine = false;
    }
    const tail = pieces[pieces.length - 1] ?? '';
    if (tail !== '') midLine = true;
    // Skipped lines need no content, and an in-range line longer than the cap is cut anyway.
    current = lineNo < startLine ? '' : current + tail;
    if (lineNo >= startLine && Buffer.byteLength(current, 'utf8') > READ_FILE_MAX_BYTES) {
      take(current);
      return r;
    }
    if (bytesRead === 0) break;
  }
  r.linesSeen = midLine ? lineNo : lineNo - 1;
  if (midLine && take(current)) {
    r.reachedEof = !r.capped;
    return r;
  }
  r.reachedEof = true;
  return r;
}

async function readFile(args: ReadFileArgs, ctx: { workspaceRoot: string }): Promise<ToolResult> {
  const { resolved, entry } = await openInWorkspace(ctx.workspaceRoot, args.path);
  if (entry.kind === 'missing') throw new ToolError('notFound', `File not found: ${resolved.relative}`);
  if (entry.kind === 'directory') {
    await entry.dir.close();
    return { content: `${resolved.relative} is a directory; use list_files to see its entries.`, isError: true };
  }
  if (entry.kind === 'special') return { content: specialFileMessage(resolved.relative, entry.stat), isError: true };
  try {
    return await readOpenFile(args, resolved.relative, entry.handle, entry.stat.size);
  } finally {
    await entry.handle.close();
  }
}

async function readOpenFile(args: ReadFileArgs, rel: string, fh: FileHandle, size: number): Promise<ToolResult> {
  const sample = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, size));
  await fh.read(sample, 0, sample.length, 0);
  const binary = binaryReason(sample);
  if (binary !== undefined) {
    return {
      content: `${rel} looks like a binary file (${binary}; ${size} bytes); read_file only returns text.`,
      isError: true,
    };
  }

  const startLine = args.startLine ?? 1;
  const read = await readLineRange(fh, startLine, args.endLine);
  if (read.lines.length === 0 && read.reachedEof && startLine > 1) {
    return {
      content: `startLine ${startLine} is past the end of ${rel} (${read.linesSeen} lines).`,
      isError: true,
    };
  }
  if (read.lines.length === 0) return { content: `[read_file: ${rel} is empty]` };
  let content = read.lines.join('\n');
  const lastShown = startLine + read.lines.length - 1;
  if (read.cutLine) {
    content +=
      `\n[read_file: line ${startLine} is longer than ${READ_FILE_MAX_BYTES} bytes and was cut; the rest of it is not shown.` +
      ` Call read_file with startLine=${lastShown + 1} to continue after it, or use search_text.]`;
  } else if (read.capped) {
    content +=
      `\n[read_file: output capped at ${READ_FILE_MAX_BYTES} bytes; showing lines ${startLine}-${lastShown}` +
      ` of a ${size}-byte file. Call read_file with startLine=${lastShown + 1} to continue.]`;
  } else if (args.endLine !== undefined && read.reachedEof && lastShown < args.endLine) {
    content += `\n[read_file: the file ends at line ${read.linesSeen}.]`;
  }
  return { content };
}

export const readFileTool: ToolDefinition<ReadFileArgs> = {
  spec: {
    name: 'read_file',
    description:
      'Read a UTF-8 text file in the workspace. Optionally pass a 1-based inclusive line range. ' +
      `Output is capped at ${READ_FILE_MAX_BYTES} bytes; CRLF is shown as LF. Binary files are refused.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.', minLength: 1 },
        startLine: { type: 'integer', description: 'First line to return (1-based).', minimum: 1 },
        endLine: { type: 'integer', description: 'Last line to return (inclusive).', minimum: 1 },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  validate(args) {
    if (args.startLine !== undefined && args.endLine !== undefined && args.endLine < args.startLine) {
      throw new ToolError('invalidArguments', `endLine (${args.endLine}) is before startLine (${args.startLine}).`);
    }
  },
  run: readFile,
};
