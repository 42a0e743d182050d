/**
 * The one shape of what the extension adds to VS Code around its core (the log, the engine host,
 * the chat views): an `ExtensionContribution` names its area, declares every command id it
 * registers, and activates against the shared environment through a scope that registers only
 * those ids and keeps what it creates for disposal. `Contributions` installs them in order and
 * disposes them in reverse; an undeclared id, or a declared one left unregistered, fails
 * activation, so the declarations are what test/unit/contributions.test.ts holds package.json to.
 */
import type * as vscode from 'vscode';
import type { ChatViews } from './chat-view';
import type { EngineHost } from './engine-host';

/** What every contribution activates against. */
export interface ContributionEnv {
  readonly ctx: vscode.ExtensionContext;
  readonly host: EngineHost;
  readonly chats: ChatViews;
  readonly log: vscode.LogOutputChannel;
}

export type CommandHandler = (...args: unknown[]) => unknown;

export interface CommandOptions {
  /** Where a failure is logged (besides the error notification). */
  log?: vscode.LogOutputChannel;
  /** Runs after the command, whatever happened (e.g. refresh a view). */
  after?: () => void;
}

/** Registers one command with VS Code (`guardedCommand` in the extension, a recorder in tests). */
export type RegisterCommand = (id: string, fn: CommandHandler, opts?: CommandOptions) => vscode.Disposable;

/** Handed to `activate`: the only way a contribution registers commands and keeps disposables. */
export interface ContributionScope {
  /** Registers a command the contribution declared; any other id throws. */
  command(id: string, fn: CommandHandler, opts?: CommandOptions): void;
  /** Keeps a disposable (a view, a provider registration, a server) to dispose with the contribution. */
  add<D extends vscode.Disposable>(d: D): D;
}

export interface ExtensionContribution<Api = void> {
  /** The area, as named in errors and docs ("checkpoints", "MCP servers view"). */
  readonly name: string;
  /** Every command id `activate` registers, each contributed in package.json (or listed as internal in the test). */
  readonly commands: readonly string[];
  /** Creates the area's views and commands; what it returns is exposed through the extension's API. */
  activate(env: ContributionEnv, scope: ContributionScope): Api;
}

export type ApiOf<C> = C extends ExtensionContribution<infer A> ? A : never;

interface Installed {
  readonly name: string;
  readonly disposables: vscode.Disposable[];
}

export class Contributions implements vscode.Disposable {
  private readonly installed: Installed[] = [];

  constructor(private readonly env: ContributionEnv, private readonly register: RegisterCommand) {}

  /** Activates one contribution and checks it registered exactly the commands it declares. */
  install<Api>(c: ExtensionContribution<Api>): Api {
    const declared = new Set(c.commands);
    if (declared.size !== c.commands.length) throw new Error(`contribution "${c.name}" declares a command twice`);
    const registered = new Set<string>();
    const entry: Installed = { name: c.name, disposables: [] };
    // Kept before activating, so what a failing activation created is still disposed.
    this.installed.push(entry);
    const scope: ContributionScope = {
      command: (id, fn, opts) => {
        if (!declared.has(id)) throw new Error(`contribution "${c.name}" registers ${id}, which it does not declare`);
        if (registered.has(id)) throw new Error(`contribution "${c.name}" registers ${id} twice`);
        registered.add(id);
        entry.disposables.push(this.register(id, fn, opts));
      },
      add: (d) => {
        entry.disposables.push(d);
        return d;
      },
    };
    const api = c.activate(this.env, scope);
    const missing = c.commands.filter((id) => !registered.has(id));
    if (missing.length > 0) throw new Error(`contribution "${c.name}" declares ${missing.join(', ')} but does not register ${missing.length === 1 ? 'it' : 'them'}`);
    return api;
  }

  /** Installs each contribution of `list` in its key order; returns their APIs under the same keys. */
  installAll<T extends Record<string, ExtensionContribution<unknown>>>(list: T): { [K in keyof T]: ApiOf<T[K]> } {
    const apis: Record<string, unknown> = {};
    for (const [key, c] of Object.entries(list)) apis[key] = this.install(c);
    return apis as { [K in keyof T]: ApiOf<T[K]> };
  }

  /** Names of the installed contributions, in installation order. */
  get names(): string[] {
    return this.installed.map((i) => i.name);
  }

  /** Disposes the last installed contribution first, and within one its disposables last-added first. */
  dispose(): void {
    const errors: unknown[] = [];
    for (const entry of this.installed.splice(0).reverse()) {
      for (const d of entry.disposables.splice(0).reverse()) {
        try {
          d.dispose();
        } catch (e) {
          errors.push(e);
        }
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'disposing the extension contributions failed');
  }
}
