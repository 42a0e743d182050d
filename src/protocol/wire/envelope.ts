/**
 * ForwardCompatibleEnvelope (SPEC §1.2): decodes wire messages `{ type: string, … }` through a
 * table of per-variant decoders, so an older client never breaks on a newer engine.
 *
 *   known type, valid payload   → { kind: 'known', type, value }
 *   known type, broken payload  → EnvelopeError('invalidPayload', variant, path to the bad field)
 *   unknown type                → { kind: 'unknown', type, raw, rawText? } — payload kept intact
 *   not JSON / not an object / no string `type` → EnvelopeError invalidJson / notAnObject / missingType
 *
 * Each variant decoder receives the whole message (including `type`), so the natural decoder is
 * `object({ type: literal('x'), … })` from ./validators and the decoded value keeps its tag.
 * `encode` writes an unknown variant back exactly as received: the original JSON text when the
 * message arrived as text (so even whitespace and integers beyond 2^53 survive), otherwise
 * `JSON.stringify(raw)`. Known values are encoded as `JSON.stringify(value)`.
 */
import { VoxError, type ErrorCode } from './vox-error';
import { quote } from './quote';
import { ValidationError, isPlainObject } from './validators';

export type EnvelopeErrorCode = ErrorCode<'protocol'>;

/** A message could not be decoded; `variant` and `path` are set for `invalidPayload`. */
export class EnvelopeError extends VoxError<'protocol'> {
  override readonly name = 'EnvelopeError';
  readonly domain = 'protocol' as const;
  constructor(
    code: EnvelopeErrorCode,
    message: string,
    readonly variant?: string,
    /** Path to the bad field inside the message, e.g. `$.items[0].id`. */
    readonly path?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** A raw wire message: any JSON object with a string `type`. */
export type WireMessage = { type: string } & Record<string, unknown>;

/** Decoder per variant tag; throws (preferably `ValidationError`) on a broken payload. */
export type VariantTable<T> = { readonly [type: string]: (message: unknown) => T };

export type KnownMessage<T> = { kind: 'known'; type: string; value: T };
export type UnknownMessage = {
  kind: 'unknown';
  type: string;
  /** The message as received (parsed), untouched. */
  raw: WireMessage;
  /** The exact JSON text, when the message arrived as text. */
  rawText?: string;
};
export type Decoded<T> = KnownMessage<T> | UnknownMessage;

export type DecodeResult<T> = { ok: true; message: Decoded<T> } | { ok: false; error: EnvelopeError };

/** Characters of offending input quoted in an `invalidJson` error message. */
const PREVIEW_CHARS = 80;

function preview(text: string): string {
  return JSON.stringify(quote(text, PREVIEW_CHARS));
}

export class ForwardCompatibleEnvelope<T> {
  /** A Map, not the table object, so `toString` or `__proto__` are never mistaken for variants. */
  private readonly decoders: ReadonlyMap<string, (message: unknown) => T>;

  constructor(variants: VariantTable<T>) {
    this.decoders = new Map(Object.entries(variants));
  }

  get knownTypes(): string[] {
    return [...this.decoders.keys()];
  }

  isKnown(type: string): boolean {
    return this.decoders.has(type);
  }

  /** Decodes a parsed message, or JSON text when given a string. Throws `EnvelopeError`. */
  decode(input: unknown): Decoded<T> {
    let rawText: string | undefined;
    let message = input;
    if (typeof input === 'string') {
      rawText = input;
      try {
        message = JSON.parse(input);
      } catch (err) {
        throw new EnvelopeError('invalidJson', `message is not valid JSON: ${preview(input)}`, undefined, undefined, {
          cause: err,
        });
      }
    }
    if (!isPlainObject(message)) {
      const what = message === null ? 'null' : Array.isArray(message) ? 'an array' : typeof message;
      throw new EnvelopeError('notAnObject', `message must be a JSON object, got ${what}`);
    }
    const type = Object.prototype.hasOwnProperty.call(message, 'type') ? message.type : undefined;
    if (typeof type !== 'string' || type.length === 0) {
      throw new EnvelopeError('missingType', 'message has no non-empty string "type"');
    }
    const decoder = this.decoders.get(type);
    if (!decoder) {
      const unknown: UnknownMessage = { kind: 'unknown', type, raw: message as WireMessage };
      if (rawText !== undefined) unknown.rawText = rawText;
      return unknown;
    }
    try {
      return { kind: 'known', type, value: decoder(message) };
    } catch (err) {
      if (err instanceof ValidationError) {
        throw new EnvelopeError('invalidPayload', `invalid "${type}" message: ${err.message}`, type, err.pathText, {
          cause: err,
        });
      }
      const detail = err instanceof Error ? err.message : String(err);
      throw new EnvelopeError('invalidPayload', `invalid "${type}" message: ${detail}`, type, '$', { cause: err });
    }
  }

  /** Like `decode` but returns the error instead of throwing it. */
  tryDecode(input: unknown): DecodeResult<T> {
    try {
      return { ok: true, message: this.decode(input) };
    } catch (err) {
      if (err instanceof EnvelopeError) return { ok: false, error: err };
      throw err;
    }
  }

  /** JSON text for a decoded message; unknown variants come out as they came in. */
  encode(message: Decoded<T>): string {
    if (message.kind === 'unknown') return message.rawText ?? JSON.stringify(message.raw);
    return JSON.stringify(message.value);
  }
}

/** Builds an envelope whose value type is the union of the decoders' results. */
export function forwardCompatible<D extends VariantTable<unknown>>(
  variants: D,
): ForwardCompatibleEnvelope<ReturnType<D[keyof D]>> {
  return new ForwardCompatibleEnvelope(variants as VariantTable<ReturnType<D[keyof D]>>);
}
