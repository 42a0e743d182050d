/**
 * The one assertion of the tests that a call fails with a typed error, named `domain/code` as the
 * table in src/protocol/wire/vox-error.ts has it (so a misspelt code does not compile):
 * `assertRejectsCode` for a promise (or a function, sync or async), `assertThrowsCode` for a
 * function that must throw synchronously. Both accept any error with `domain` and `code`: a
 * VoxError thrown in this process or a ClientError that crossed the protocol; a class given as
 * `type` (or in place of the options) must match too. They return the error for further checks,
 * and a failure says what was thrown instead, or that the call resolved and with what.
 */
import { strict as assert } from 'node:assert';
import type { ErrorCode, ErrorDomain } from '../../src/protocol/wire/vox-error';

/** `domain/code`, e.g. 'run/threadBusy': only the pairs of the error table. */
export type QualifiedCode = { [D in ErrorDomain]: `${D}/${ErrorCode<D>}` }[ErrorDomain];

/** What the assertions accept: an Error that names its domain and code. */
export interface CodedError extends Error {
  readonly domain: string;
  readonly code: string;
}

type ErrorClass<E> = abstract new (...args: never[]) => E;

export interface CodeOptions<E extends CodedError> {
  /** The error must be an instance of this class (e.g. ClientError: it crossed the protocol). */
  type?: ErrorClass<E>;
  /** The error's message must match. */
  message?: RegExp;
}

/** A short readable account of a thrown or resolved value, for failure messages. */
function describe(v: unknown): string {
  if (v instanceof Error) {
    const coded = v as Partial<CodedError>;
    const code = typeof coded.domain === 'string' && typeof coded.code === 'string' ? ` ${coded.domain}/${coded.code}` : '';
    return `${v.constructor.name}${code}: ${v.message}`;
  }
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

function options<E extends CodedError>(opts: ErrorClass<E> | CodeOptions<E> | undefined): CodeOptions<E> {
  return typeof opts === 'function' ? { type: opts } : (opts ?? {});
}

/** Asserts that `err` carries `code` (and the options' class and message); returns it. */
export function assertErrorCode<E extends CodedError = CodedError>(err: unknown, code: QualifiedCode, opts?: ErrorClass<E> | CodeOptions<E>): E {
  const o = options(opts);
  const got = describe(err);
  if (o.type) assert.ok(err instanceof o.type, `expected ${o.type.name} ${code}, got ${got}`);
  const coded = err as Partial<CodedError> | null;
  assert.ok(err instanceof Error && typeof coded?.domain === 'string' && typeof coded.code === 'string', `expected an error with code ${code}, got ${got}`);
  assert.equal(`${coded.domain}/${coded.code}`, code, `expected ${code}, got ${got}`);
  if (o.message) assert.match(err.message, o.message, `the message of ${code}`);
  return err as E;
}

/**
 * Awaits `p` (or calls it and awaits what it returns) and asserts that it fails with `code`;
 * returns the error. `opts`: a class the error must be, or `{ type, message }`.
 */
export async function assertRejectsCode<E extends CodedError = CodedError>(
  p: Promise<unknown> | (() => unknown),
  code: QualifiedCode,
  opts?: ErrorClass<E> | CodeOptions<E>,
): Promise<E> {
  let value: unknown;
  try {
    value = await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return assertErrorCode(e, code, opts);
  }
  return assert.fail(`expected a failure with ${code}, but it resolved with ${describe(value)}`);
}

/** Calls `fn` and asserts that it throws `code` synchronously; returns the error. */
export function assertThrowsCode<E extends CodedError = CodedError>(fn: () => unknown, code: QualifiedCode, opts?: ErrorClass<E> | CodeOptions<E>): E {
  let value: unknown;
  try {
    value = fn();
  } catch (e) {
    return assertErrorCode(e, code, opts);
  }
  return assert.fail(`expected ${code} to be thrown, but it returned ${describe(value)}`);
}
