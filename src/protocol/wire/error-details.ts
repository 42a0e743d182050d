/**
 * The structured `details` an error may carry on the wire, declared per domain in this one
 * place: the engine passes exactly these fields (session/wire-errors.ts picks them from the thrown
 * error, JSON-safe facts only — never a cause, a stack or git's raw output), the engine's error
 * classes of these domains take them as their details' type, and a client can narrow
 * `details` by `domain`. A domain absent here sends no details.
 */
import type { ErrorDomain } from './vox-error';

export interface ErrorDetailsByDomain {
  /** `capabilityDenied`: the capabilities missing; `invalidCommand`: the envelope's reason and where. */
  protocol: { missing?: string[]; reason?: string; path?: string };
  /** The run that holds a busy thread, or the run asked about. */
  run: { runId?: string; threadId?: string };
  variant: { files?: string[]; models?: Array<{ index: number; ref: string; message: string }>; index?: number; path?: string };
  worktree: { path?: string; dirtyFiles?: string[]; lockReason?: string; leftBehind?: string[] };
  provider: { status?: number; resetAtMs?: number; retryAfterMs?: number };
  download: { status?: number };
  connect: { provider?: string; endpoint?: string; status?: number };
  branch: { threadId?: string; messageId?: string; runId?: string; count?: number; max?: number };
  compaction: { threadId?: string; messageId?: string };
  mcpApp: { threadId?: string; itemId?: string; bytes?: number; max?: number };
  /** `mentionNotAttached`: each mention that could not be attached, by its index in the prompt's mentions. */
  context: { mentions?: Array<{ index: number; label: string; warning: string }> };
  /** A refused call: what it would have cost at most and what the balance or cap leaves (BU, SPEC 3.4); the cap's scope. */
  ledger: { requiredBu?: number; remainingBu?: number; scope?: string };
}

export type DetailedDomain = keyof ErrorDetailsByDomain & ErrorDomain;
export type ErrorDetailsOf<D extends ErrorDomain> = D extends DetailedDomain ? ErrorDetailsByDomain[D] : never;

/** Every field of every domain's details, once (the type makes the list complete and exact). */
const FIELDS: { [D in DetailedDomain]: { [F in keyof ErrorDetailsByDomain[D]]-?: true } } = {
  protocol: { missing: true, reason: true, path: true },
  run: { runId: true, threadId: true },
  variant: { files: true, models: true, index: true, path: true },
  worktree: { path: true, dirtyFiles: true, lockReason: true, leftBehind: true },
  provider: { status: true, resetAtMs: true, retryAfterMs: true },
  download: { status: true },
  connect: { provider: true, endpoint: true, status: true },
  branch: { threadId: true, messageId: true, runId: true, count: true, max: true },
  compaction: { threadId: true, messageId: true },
  mcpApp: { threadId: true, itemId: true, bytes: true, max: true },
  context: { mentions: true },
  ledger: { requiredBu: true, remainingBu: true, scope: true },
};

/** The fields of `details` that may travel for `domain` (none: it sends no details). */
export function detailFields(domain: ErrorDomain): readonly string[] {
  const f = (FIELDS as Partial<Record<ErrorDomain, Record<string, true>>>)[domain];
  return f ? Object.keys(f) : [];
}
