/**
 * Reading a JSONL transcript from a byte offset: complete lines only (a line still being written
 * stays for the next import), in bounded blocks so a large file never becomes one string, a line
 * longer than the limit skipped (and counted), a line that is not JSON skipped (and counted) —
 * never the whole file.
 */
import * as fs from 'node:fs';
import { skip, type ImportTally } from './types';

/** Bytes read from the file per block. */
const READ_BLOCK_BYTES = 8 * 1024 * 1024;

let shared: Buffer | null = null;
/** One read buffer for the process (reads are synchronous, never interleaved), grown to the largest block asked for. */
function readBlock(n: number): Buffer {
  if (!shared || shared.length < n) shared = Buffer.allocUnsafe(n);
  return shared;
}

export interface JsonlRead {
  /** The offset after the last consumed line (where the next import starts). */
  end: number;
  /** Lines consumed, parsed or not (for the bookkeeping). */
  lines: number;
}

/**
 * Calls `onLine` for each parsed line of `file` between `start` and `size`. The last piece
 * without a newline is consumed only when it parses (a finished file that lacks the final `\n`).
 */
export function readJsonl(file: string, start: number, size: number, maxLineBytes: number, tally: ImportTally, onLine: (value: unknown) => void): JsonlRead {
  const fd = fs.openSync(file, 'r');
  let pos = start;
  let end = start;
  let lines = 0;
  let carry: Buffer | null = null;
  let oversized = false; // inside a line longer than the limit: its bytes are dropped until its newline
  const block = readBlock(Math.min(READ_BLOCK_BYTES, Math.max(1, size - start)));
  const take = (line: string): void => {
    if (line.trim().length === 0) return;
    lines++;
    tally.lines++;
    // Characters never outnumber bytes; only a line that may be too long is measured in bytes.
    if (line.length * 3 > maxLineBytes && Buffer.byteLength(line) > maxLineBytes) return skip(tally, 'lineTooLong');
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return skip(tally, 'corruptLine');
    }
    onLine(value);
  };
  try {
    while (pos < size) {
      const n = fs.readSync(fd, block, 0, Math.min(block.length, size - pos), pos);
      if (n <= 0) break;
      const base = pos - (carry?.length ?? 0);
      const data: Buffer = carry ? Buffer.concat([carry, block.subarray(0, n)]) : block.subarray(0, n);
      carry = null;
      pos += n;
      const lastNl = data.lastIndexOf(0x0a);
      if (lastNl >= 0) {
        // One decode per block: a 0x0A byte is never inside a UTF-8 sequence, so the split lines are the file's lines.
        const parts = data.toString('utf8', 0, lastNl).split('\n');
        let i = 0;
        if (oversized) {
          oversized = false;
          lines++;
          tally.lines++;
          skip(tally, 'lineTooLong');
          i = 1;
        }
        for (; i < parts.length; i++) take(parts[i]!);
        end = base + lastNl + 1;
      }
      const rest = data.length - (lastNl + 1);
      if (oversized || rest > maxLineBytes) oversized = true;
      else if (rest > 0) carry = Buffer.from(data.subarray(lastNl + 1));
    }
    if (carry && carry.length > 0) {
      // A last line without its newline: taken when it is whole JSON, else left for the next import.
      const text = carry.toString('utf8');
      let whole = true;
      try {
        JSON.parse(text);
      } catch {
        whole = false; // still being written
      }
      if (whole) {
        take(text);
        end += carry.length;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { end, lines };
}

/** The first parsable lines of a file (at most `maxBytes` read), for the scan's title and project. */
export function headLines(file: string, maxBytes: number, maxLines = 50): unknown[] {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(maxBytes, fs.fstatSync(fd).size)));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const out: unknown[] = [];
    let start = 0;
    for (let nl = buf.indexOf(0x0a, 0); nl !== -1 && nl < n && out.length < maxLines; nl = buf.indexOf(0x0a, start)) {
      try {
        out.push(JSON.parse(buf.toString('utf8', start, nl)));
      } catch {
        // a corrupt line: the scan looks further
      }
      start = nl + 1;
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
