/**
 * Small composable validators for untrusted wire data. Each validator is a function
 * `(value: unknown, path?) => T` that returns the value typed (objects are rebuilt, keeping only
 * declared keys) or throws a `ValidationError` carrying the path to the offending field
 * (`$.items[2].id`). `Infer<typeof v>` gives the TypeScript type a validator produces.
 *
 *   const chat = object({ type: literal('chat'), text: str, tags: optional(arrayOf(str)) });
 *   type Chat = Infer<typeof chat>;   // { type: 'chat'; text: string; tags?: string[] }
 *
 * Rules: `num` accepts finite numbers, `int` safe integers; `optional` allows a missing key or
 * `undefined` (not `null` — use `nullable`); `object` ignores undeclared keys (newer senders may
 * add fields) and reads own properties only, so `toString` or `__proto__` are never picked up
 * from the prototype.
 */
import { VoxError } from './vox-error';

export type PathSegment = string | number;

/** Identifier-like keys print as `.key`, anything else as `["key"]`. */
const PLAIN_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function formatPath(path: readonly PathSegment[]): string {
  let out = '$';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += PLAIN_KEY_RE.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value;
}

/** A value failed validation at `path` (segments) / `pathText` (`$.a[0].b`). */
export class ValidationError extends VoxError<'protocol'> {
  override readonly name = 'ValidationError';
  readonly domain = 'protocol' as const;
  readonly pathText: string;
  constructor(
    readonly path: readonly PathSegment[],
    readonly expected: string,
    readonly actual: string,
  ) {
    const pathText = formatPath(path);
    super('invalidValue', `${pathText}: expected ${expected}, got ${actual}`);
    this.pathText = pathText;
  }
}

export interface Validator<T> {
  (value: unknown, path?: readonly PathSegment[]): T;
  /** Human-readable description used in error messages ("string", "one of 'a' | 'b"). */
  readonly expected: string;
  /** Set by `optional`: the key may be absent inside `object`. */
  readonly isOptional?: true;
}

/** The type a validator produces. */
export type Infer<V> = V extends Validator<infer T> ? T : never;

/** Builds a validator from a check; `check` returns the value or throws via `fail`. */
export function validator<T>(
  expected: string,
  check: (value: unknown, path: readonly PathSegment[], fail: () => never) => T,
): Validator<T> {
  const fn = (value: unknown, path: readonly PathSegment[] = []): T =>
    check(value, path, () => {
      throw new ValidationError(path, expected, describe(value));
    });
  return Object.assign(fn, { expected });
}

export const str: Validator<string> = validator('string', (v, _p, fail) =>
  typeof v === 'string' ? v : fail(),
);

export const num: Validator<number> = validator('finite number', (v, _p, fail) =>
  typeof v === 'number' && Number.isFinite(v) ? v : fail(),
);

export const int: Validator<number> = validator('safe integer', (v, _p, fail) =>
  typeof v === 'number' && Number.isSafeInteger(v) ? v : fail(),
);

export const bool: Validator<boolean> = validator('boolean', (v, _p, fail) =>
  typeof v === 'boolean' ? v : fail(),
);

/** Accepts anything, unchanged (for opaque payloads passed through). */
export const unknownValue: Validator<unknown> = validator('any value', (v) => v);

type Literal = string | number | boolean | null;

/** One of the given constants: `literal('a', 'b')` → `'a' | 'b'`. */
export function literal<const L extends readonly [Literal, ...Literal[]]>(...values: L): Validator<L[number]> {
  const expected = values.map((v) => JSON.stringify(v)).join(' | ');
  return validator(expected, (v, _p, fail) =>
    (values as readonly unknown[]).includes(v) ? (v as L[number]) : fail(),
  );
}

/** The key may be missing (or `undefined`). */
export function optional<T>(inner: Validator<T>): Validator<T | undefined> & { readonly isOptional: true } {
  const v = validator(`${inner.expected} (optional)`, (value, path) =>
    value === undefined ? undefined : inner(value, path),
  );
  return Object.assign(v, { isOptional: true as const });
}

/** `null` or the inner type. */
export function nullable<T>(inner: Validator<T>): Validator<T | null> {
  return validator(`${inner.expected} | null`, (value, path, fail) => {
    if (value === null) return null;
    try {
      return inner(value, path);
    } catch (err) {
      // A mismatch of this very value reads better as "expected X | null"; deeper errors pass.
      if (err instanceof ValidationError && err.path.length === path.length) return fail();
      throw err;
    }
  });
}

export function arrayOf<T>(item: Validator<T>): Validator<T[]> {
  return validator(`array of ${item.expected}`, (value, path, fail) => {
    if (!Array.isArray(value)) return fail();
    return value.map((el, i) => item(el, [...path, i]));
  });
}

/** First alternative that accepts the value wins; if none does, the error lists all of them. */
export function oneOf<const V extends readonly [Validator<unknown>, ...Validator<unknown>[]]>(
  ...alternatives: V
): Validator<Infer<V[number]>> {
  const expected = alternatives.map((a) => a.expected).join(' | ');
  return validator(expected, (value, path, fail) => {
    for (const alt of alternatives) {
      try {
        return alt(value, path) as Infer<V[number]>;
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
      }
    }
    return fail();
  });
}

/** Adds a constraint: `refine(str, (s) => s.length <= 40, 'at most 40 characters')`. */
export function refine<T>(inner: Validator<T>, ok: (value: T) => boolean, expected: string): Validator<T> {
  return validator(`${inner.expected} (${expected})`, (value, path, fail) => {
    const v = inner(value, path);
    return ok(v) ? v : fail();
  });
}

export type Shape = Record<string, Validator<unknown>>;

type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends { isOptional: true } ? K : never }[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type ObjectOf<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-null, non-array object with the declared keys; undeclared keys are dropped. `.shape` is the declaration. */
export function object<S extends Shape>(shape: S): Validator<ObjectOf<S>> & { readonly shape: S } {
  const keys = Object.keys(shape);
  const v = validator(`object {${keys.join(', ')}}`, (value, path, fail) => {
    if (!isPlainObject(value)) return fail();
    const entries: [string, unknown][] = [];
    for (const key of keys) {
      const present = Object.prototype.hasOwnProperty.call(value, key);
      const parsed = (shape[key] as Validator<unknown>)(present ? value[key] : undefined, [...path, key]);
      if (parsed !== undefined) entries.push([key, parsed]); // absent optionals stay absent
    }
    // fromEntries defines own properties, so a `__proto__` key stays data.
    return Object.fromEntries(entries) as ObjectOf<S>;
  });
  // The shape stays readable, so a message can extend another's fields: object({ ...a.shape, b }).
  return Object.assign(v, { shape });
}
