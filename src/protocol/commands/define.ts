/**
 * How a command is declared. A command is a message `{type, requestId?, …params}` from a client;
 * the engine answers `result {inReplyTo, value}` or `error {inReplyTo, domain, code, message}`
 * (../updates.ts). Each declaration carries:
 *   - `message`: the validator of the whole message (params are declared as an object shape);
 *   - `result`: the validator of the value the engine answers with (clients decode it, the
 *     engine checks its own answers against it, so the contract cannot drift);
 *   - `requires`: the capabilities a caller's grant must hold (./grants.ts) — a function of the
 *     params when they decide it (a prompt that starts a new thread needs `startThreads` too);
 *   - `summary`: one line for help texts and docs;
 *   - behaviour flags the session applies before the handler (as VS Code's git extension
 *     declares its operations'): `exclusive` — commands with the same key (the message's
 *     `threadId`, or the workspace) run one after another, never interleaved; `readOnly` — it
 *     works on a read-only store (an engine opened read-only refuses every other command with
 *     `store/readOnly` before it runs). There is no `progress` flag: the protocol has no
 *     progress update to send while a command runs.
 * Adding a command: declare it in its area's file (./threads.ts, ./runs.ts, …), add a handler in
 * the engine's session/handlers/ for the same area; a client calls it by type.
 */
import { literal, object, optional, str, type ObjectOf, type Shape, type Validator } from '../wire/validators';
import type { Capability } from './grants';

export interface CommandSpec<T extends string = string, P = unknown, R = unknown> {
  readonly type: T;
  readonly summary: string;
  readonly requires: readonly Capability[] | ((params: P) => readonly Capability[]);
  /** Validates the whole message: `type`, optional `requestId`, and the params. */
  readonly message: Validator<P & { type: T; requestId?: string }>;
  readonly result: Validator<R>;
  readonly exclusive?: Exclusive;
  readonly readOnly?: true;
}

/** What a command is serialised by: its message's thread (`threadId`), or the whole workspace. */
export type Exclusive = 'thread' | 'workspace';

export function defineCommand<T extends string, S extends Shape, R>(
  type: T,
  spec: {
    summary: string;
    /** A function of the params must annotate them (kept out of inference, so the params' types come from `params`). */
    requires: readonly Capability[] | ((params: never) => readonly Capability[]);
    params: S;
    result: Validator<R>;
    exclusive?: Exclusive;
    readOnly?: true;
  },
): CommandSpec<T, ObjectOf<S>, R> {
  const message = object({ type: literal(type), requestId: optional(str), ...spec.params }) as unknown as Validator<ObjectOf<S> & { type: T; requestId?: string }>;
  return {
    type, summary: spec.summary, requires: spec.requires as CommandSpec<T, ObjectOf<S>, R>['requires'], message, result: spec.result,
    ...(spec.exclusive ? { exclusive: spec.exclusive } : {}), ...(spec.readOnly ? { readOnly: true as const } : {}),
  };
}

/** The capabilities a particular command message needs. */
export function requiredCapabilities<P>(spec: CommandSpec<string, P, unknown>, params: P): readonly Capability[] {
  return typeof spec.requires === 'function' ? spec.requires(params) : spec.requires;
}

/** The lock key an exclusive command runs under (null: it runs at once — not exclusive, or no thread named). */
export function exclusiveKey(spec: Pick<CommandSpec, 'exclusive'>, message: { threadId?: unknown }): string | null {
  if (spec.exclusive === 'workspace') return 'workspace';
  if (spec.exclusive === 'thread' && typeof message.threadId === 'string') return `thread:${message.threadId}`;
  return null;
}

/** The answer of commands that only acknowledge. */
export const ack = object({});
