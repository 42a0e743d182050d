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
  let oversized = false; // inside a line longer than the limit: drop bytes until its newline
  const block = Buffer.allocUnsafe(READ_BLOCK_BYTES);
  const parse = (buf: Buffer, a: number, b: number): boolean => {
    lines++;
    tally.lines++;
    if (b - a > maxLineBytes) {
      skip(tally, 'lineTooLong');
      return true;
    }
    let i = a;
    while (i < b && (buf[i] === 0x20 || buf[i] === 0x0d || buf[i] === 0x09)) i++;
    if (i === b) {
      lines--;
      tally.lines--;
      return true;
    }
    let value: unknown;
    try {
      value = JSON.parse(buf.toString('utf8', a, b));
    } catch {
      skip(tally, 'corruptLine');
      return false;
    }
    onLine(value);
    return true;
  };
  try {
    while (pos < size) {
      const n = fs.readSync(fd, block, 0, Math.min(READ_BLOCK_BYTES, size - pos), pos);
      if (n <= 0) break;
      let data = block.subarray(0, n);
      let base = pos - (carry?.length ?? 0);
      if (carry) {
        data = Buffer.concat([carry, data]);
        carry = null;
      }
      pos += n;
      let lineStart = 0;
      for (let nl = data.indexOf(0x0a, 0); nl !== -1; nl = data.indexOf(0x0a, lineStart)) {
        if (oversized) {
          oversized = false;
          lines++;
          tally.lines++;
          skip(tally, 'lineTooLong');
        } else {
          parse(data, lineStart, nl);
        }
        lineStart = nl + 1;
        end = base + lineStart;
      }
      const rest = data.length - lineStart;
      if (rest > maxLineBytes) {
        oversized = true; // keep nothing of it; the newline ends it
      } else if (!oversized && rest > 0) {
        carry = Buffer.from(data.subarray(lineStart));
        base += lineStart;
      }
    }
    if (carry && carry.length > 0) {
      // A last line without its newline: taken when it is whole JSON, else left for the next import.
      try {
        JSON.parse(carry.toString('utf8'));
        parse(carry, 0, carry.length);
        end += carry.length;
      } catch {
        // still being written
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
    const buf = Buffer.allocUnsafe(maxBytes);
    const n = fs.readSync(fd, buf, 0, maxBytes, 0);
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
