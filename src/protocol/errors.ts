/**
 * Errors as they travel: `{domain, code, message}` (plus optional structured `details` a client
 * may use, e.g. the conflicting files of a variant adoption). Every failure a command can have
 * reaches a client in this shape, produced from a `VoxError` (./wire/vox-error.ts) by the
 * engine's one mapping (engine/session/wire-errors.ts). A code this client does not know (a newer
 * engine) still decodes: `domain` and `message` are enough to show it.
 */
import { object, optional, str, unknownValue, type Infer } from './wire/validators';
import type { ErrorCode, ErrorDomain } from './wire/vox-error';

export { ERROR_CODES, ERROR_DOMAINS, VoxError, isVoxError, type ErrorCode, type ErrorDomain } from './wire/vox-error';

export const wireError = object({
  /** An ErrorDomain of ./wire/vox-error.ts (a newer engine may send one this client does not know). */
  domain: str,
  code: str,
  message: str,
  /** Structured facts for clients that act on them (paths, indexes); never secrets. */
  details: optional(unknownValue),
});
export type WireError = Infer<typeof wireError>;

/** True when `e` is `domain`/`code` — a typed check that the pair exists in the table. */
export function isWireError<D extends ErrorDomain>(e: WireError, d: D, code: ErrorCode<D>): boolean {
  return e.domain === d && e.code === code;
}

