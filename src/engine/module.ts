/**
 * The module contract: each capability folder exports one `EngineModule` that declares its name,
 * the modules it needs, and what it contributes — protocol command handlers, its part of the
 * store (migrations, projectors, observers), tools, turn stages (installed on the hook bus), a
 * service other modules or handlers use, and its disposal. The engine (./engine.ts) installs the
 * list of ./modules.ts in dependency order and disposes it in reverse; the command table the
 * sessions dispatch on and the store's schema are derived from the modules.
 */
import type { CommandOf, CommandResult, CommandSpec, CommandType } from '../protocol/commands/index';
import type { Grant } from '../protocol/commands/grants';
import type { SettingsView } from '../protocol/commands/settings';
import type { EngineUpdate } from '../protocol/updates';
import type { HookBus } from './agent/hooks';
import type { Host } from './host';
import type { StoreSchema } from './store/schema';
import type { VoxStore } from './store/store';
import type { ToolRegistry } from './tools/registry';
import type { AgentTool } from './tools/types';

/** What a handler sees of the session that called it. */
export interface SessionPort {
  /** The grant the session was connected with (its capabilities were checked already; its modes are checked where a thread gets them). */
  readonly grant: Grant;
  /** A workspace-bound session's reach (./session/thread-scope.ts): its workspace and whether a thread is in it; null: every thread. */
  readonly scope: { readonly workspace: string | null; inScope(threadId: string): boolean } | null;
  send(u: EngineUpdate): void;
  /** Registers a subscription under `key`, replacing (and stopping) one with the same key. */
  addSubscription(key: string, stop: () => void): void;
  dropSubscription(key: string): void;
  settings(): SettingsView;
}

/** A command's handler, over the services `S` its module declares it needs. */
export type ModuleHandler<K extends CommandType, S> = (ctx: { services: S; session: SessionPort }, cmd: CommandOf<K>) => CommandResult<K> | Promise<CommandResult<K>>;
export type ModuleHandlers<K extends CommandType, S> = { [P in K]: ModuleHandler<P, S> };

/** What every module may use while it installs. */
export interface ModuleContext {
  readonly host: Host;
  readonly store: VoxStore;
  readonly tools: ToolRegistry;
  readonly hooks: HookBus;
  readonly workspaceRoot: string;
  /** The services the modules installed so far provide (the core's: store, providers, streams, runs, …), by name. */
  readonly services: Readonly<Record<string, unknown>>;
  /** Adds a teardown step, run in reverse install order when the engine is disposed. */
  onDispose(name: string, dispose: () => void | Promise<void>): void;
}

export interface EngineModule {
  /** The module's name: its folder's. */
  readonly name: string;
  /** The modules it needs (installed before it; `engine.test` checks these match its folder's imports). */
  readonly deps: readonly string[];
  /** Its part of the store: migrations, projectors of the events it owns, observers of others'. */
  readonly schema?: StoreSchema;
  /**
   * Commands it declares beyond the protocol's table (their specs in its protocol file): a new
   * capability's commands, decoded, granted and checked like the table's.
   */
  readonly commands?: Readonly<Record<string, CommandSpec>>;
  /** Handlers of the protocol commands it answers (each command has exactly one handler in the engine). */
  readonly handlers?: { [K in CommandType]?: ModuleHandler<K, never> };
  /** Tools it adds to the registry. */
  readonly tools?: readonly AgentTool[];
  /** Installs its stages and services; the returned record joins `services` under those names. */
  install?(ctx: ModuleContext): Record<string, unknown> | void;
}

export class ModuleError extends Error {
  override readonly name = 'ModuleError';
}

/** The modules in an order where each comes after its deps (stable for independent ones); a missing dep or a cycle is a ModuleError. */
export function installOrder(modules: readonly EngineModule[], provided: ReadonlySet<string> = new Set()): EngineModule[] {
  const byName = new Map(modules.map((m) => [m.name, m]));
  if (byName.size !== modules.length) throw new ModuleError('two modules have the same name');
  const out: EngineModule[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (m: EngineModule, path: string[]): void => {
    if (state.get(m.name) === 'done') return;
    if (state.get(m.name) === 'visiting') throw new ModuleError(`modules depend on each other: ${[...path, m.name].join(' → ')}`);
    state.set(m.name, 'visiting');
    for (const d of m.deps) {
      const dep = byName.get(d);
      if (dep) visit(dep, [...path, m.name]);
      else if (!provided.has(d)) throw new ModuleError(`module ${m.name} needs ${d}, which no module provides`);
    }
    state.set(m.name, 'done');
    out.push(m);
  };
  for (const m of modules) visit(m, []);
  return out;
}

/** The command table of the modules: exactly one handler per command (a duplicate is a ModuleError). */
export function handlerTable(modules: readonly EngineModule[]): Map<string, { module: string; handler: ModuleHandler<CommandType, never> }> {
  const table = new Map<string, { module: string; handler: ModuleHandler<CommandType, never> }>();
  for (const m of modules) {
    for (const [type, handler] of Object.entries(m.handlers ?? {})) {
      const had = table.get(type);
      if (had) throw new ModuleError(`command ${type} has two handlers: modules ${had.module} and ${m.name}`);
      table.set(type, { module: m.name, handler: handler as ModuleHandler<CommandType, never> });
    }
  }
  return table;
}
