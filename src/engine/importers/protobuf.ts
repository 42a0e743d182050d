/**
 * A minimal protobuf wire-format reader (https://protobuf.dev/programming-guides/encoding/):
 * varints, and the fields of a message as (number, wire type, value). Enough to list the
 * length-delimited fields of Cursor's root blob without a schema; malformed input is a typed
 * ImportError, never an out-of-bounds read.
 */
import { ImportError } from './types';

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

export interface ProtoField { field: number; wire: number; bytes: Uint8Array | null; varint: bigint | null }

/** Reads a base-128 varint at `pos` (at most 10 bytes): its value and the position after it. */
export function readVarint(buf: Uint8Array, pos: number): { value: bigint; next: number } {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= buf.length) throw new ImportError('notACursorStore', 'protobuf: truncated varint');
    const b = buf[pos + i]!;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return { value, next: pos + i + 1 };
    shift += 7n;
  }
  throw new ImportError('notACursorStore', 'protobuf: varint longer than 10 bytes');
}

/** Every field of one message, in order (groups, wire types 3/4, are refused: proto3 has none). */
export function readFields(buf: Uint8Array): ProtoField[] {
  const out: ProtoField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const tag = readVarint(buf, pos);
    pos = tag.next;
    const field = Number(tag.value >> 3n);
    const wire = Number(tag.value & 7n);
    if (field === 0) throw new ImportError('notACursorStore', 'protobuf: field number 0');
    if (wire === WIRE_VARINT) {
      const v = readVarint(buf, pos);
      pos = v.next;
      out.push({ field, wire, bytes: null, varint: v.value });
    } else if (wire === WIRE_LEN) {
      const len = readVarint(buf, pos);
      const n = Number(len.value);
      const start = len.next;
      if (n < 0 || start + n > buf.length) throw new ImportError('notACursorStore', `protobuf: field ${field} runs past the end`);
      out.push({ field, wire, bytes: buf.subarray(start, start + n), varint: null });
      pos = start + n;
    } else if (wire === WIRE_I64 || wire === WIRE_I32) {
      const n = wire === WIRE_I64 ? 8 : 4;
      if (pos + n > buf.length) throw new ImportError('notACursorStore', `protobuf: field ${field} runs past the end`);
      out.push({ field, wire, bytes: buf.subarray(pos, pos + n), varint: null });
      pos += n;
    } else {
      throw new ImportError('notACursorStore', `protobuf: unsupported wire type ${wire}`);
    }
  }
  return out;
}

/** Encodes a varint (tests build Cursor stores with it). */
export function encodeVarint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A length-delimited field (tests build Cursor stores with it). */
export function lenField(field: number, bytes: Uint8Array): Uint8Array {
  return Uint8Array.from([...encodeVarint((field << 3) | WIRE_LEN), ...encodeVarint(bytes.length), ...bytes]);
}
