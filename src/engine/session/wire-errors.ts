/**
 * The one mapping from a thrown value to the error a client receives, `{domain, code, message,
 * details?}`. A `VoxError` keeps its domain, code and message; the structured facts some carry
 * (the files of a variant conflict, the run holding a busy thread, a dirty worktree's files) are
 * passed as `details`, the fields its domain declares (../../protocol/wire/error-details.ts) — never a `cause`, a stack or git's raw output. Anything
 * that is not a VoxError is an internal error: the client gets a generic message and the raw
 * error goes to the host's log, so no library's words reach a user as if they were Vox's.
 */
import type { WireError } from '../../protocol/errors';
import { isVoxError, type VoxError } from '../../protocol/wire/vox-error';
import { detailFields } from '../../protocol/wire/error-details';
import { EnvelopeError } from '../../protocol/wire/envelope';
import { redact } from '../platform/secrets';

type DetailsOf = (e: VoxError & { details?: Record<string, unknown> }) => Record<string, unknown> | undefined;

const pickDetails: DetailsOf = (e) => {
  const fields = detailFields(e.domain);
  const d = e.details;
  if (fields.length === 0 || !d || typeof d !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (d[f] !== undefined) out[f] = d[f];
  return Object.keys(out).length > 0 ? out : undefined;
};

/** A command message that did not decode: one code for the client, the envelope's reason as details. */
export function invalidCommand(e: EnvelopeError): WireError {
  return { domain: 'protocol', code: 'invalidCommand', message: e.message, details: { reason: e.code, ...(e.path ? { path: e.path } : {}) } };
}

export function toWireError(e: unknown, log: (raw: unknown) => void): WireError {
  if (e instanceof EnvelopeError) return invalidCommand(e);
  if (isVoxError(e)) {
    const details = pickDetails(e as VoxError & { details?: Record<string, unknown> });
    // A provider or a tool may have put a key in the text: redacted on its way out.
    return { domain: e.domain, code: e.code, message: redact(e.message), ...(details ? { details: JSON.parse(redact(JSON.stringify(details))) as unknown } : {}) };
  }
  log(e);
  const name = e instanceof Error ? e.name : typeof e;
  return { domain: 'internal', code: 'internal', message: `Vox hit an internal error (${name}); the details are in "Vox: Show Logs".` };
}
