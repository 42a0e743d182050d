/**
 * ClientSession: one connected client (sidebar webview, editor tab, the Source Control views,
 * the CLI, later a guest page or an MCP client) talking the protocol of src/protocol. Each
 * message is decoded through the forward-compatible command envelope, checked against the
 * session's grant (a command above it is refused with `protocol/capabilityDenied` before anything
 * runs), held to its declared flags (a read-only store refuses a writing command; an exclusive one
 * waits for the one before it, ./exclusive.ts), dispatched to its area's handler (./handlers/), and answered exactly once: `result` with
 * the value (checked against the command's result validator) or `error` ({domain, code, message},
 * ./wire-errors.ts). Subscriptions then push only new data until `unsubscribe` or `dispose`.
 */
import { withSuggestions } from '../permissions/always-allow';
import { compatEndpoints } from '../providers/compat-endpoints';
import { EnvelopeError } from '../../protocol/wire/envelope';
import { commandEnvelope, requiredCapabilities, type CommandType } from '../../protocol/commands/index';
import { exclusiveKey } from '../../protocol/commands/define';
import { runExclusive } from './exclusive';
import { holds, missingCapabilities, type Grant } from '../../protocol/commands/grants';
import type { SettingsView } from '../../protocol/commands/settings';
import { groupRecent, recentModels, uiPreferences } from '../connect/recent';
import { mementoOf } from './handlers/models';
import type { EngineUpdate } from '../../protocol/updates';
import { DEMO_MODEL_NOTICE, isDemoModel } from '../model/demo-model';
import type { EngineServices } from '../services';
import { invalidCommand, toWireError } from './wire-errors';
import { checkRunCommandModes } from './thread-modes';
import { ThreadScope } from './thread-scope';

export class ClientSession {
  private readonly subscriptions = new Map<string, () => void>();
  private readonly stops: Array<() => void> = [];
  private closed = false;
  /** Null unless the grant confines it to its workspace's threads (./thread-scope.ts). */
  readonly scope: ThreadScope | null;

  constructor(
    readonly services: EngineServices,
    private readonly sink: (u: EngineUpdate) => void,
    readonly grant: Grant,
    private readonly onClose: () => void = () => undefined,
  ) {
    this.scope = ThreadScope.of(grant, services.store);
    if (holds(grant, 'read')) {
      const { gate, host } = services;
      this.stops.push(
        gate.onPending((req) => this.send({ type: 'approvalRequested', ...withSuggestions(req, services.workspaceRoot) })),
        gate.onSettled((s) => this.send({ type: 'approvalSettled', ...s })),
        host.onSettingsChange(() => this.send({ type: 'settings', ...this.settings() })),
        // .vox/permissions.json changed on disk: clients ask getPermissions again, as after a settings change.
        services.permissions.onChange(() => this.send({ type: 'settings', ...this.settings() })),
      );
      // A client that connects while approvals wait (a reloaded webview) still sees them.
      for (const req of gate.pending()) this.send({ type: 'approvalRequested', ...withSuggestions(req, services.workspaceRoot) });
    }
  }

  send(given: EngineUpdate): void {
    if (this.closed) return;
    try {
      const u = this.scope ? this.scope.update(given) : given;
      if (u === null) return;
      this.sink(u);
    } catch (e) {
      this.log(e); // a broken client never breaks the engine
    }
  }

  /** Decodes and runs one command. Never throws: failures become `error` updates. */
  handle(raw: unknown): void {
    let requestId: string | undefined;
    let type: CommandType;
    let message: { type: CommandType; requestId?: string };
    try {
      const decoded = commandEnvelope.decode(raw);
      const moduleSpec = decoded.kind === 'unknown' ? this.services.commands.get(decoded.type) : undefined;
      if (decoded.kind === 'unknown' && moduleSpec) {
        // A command a module declares (./../module.ts): decoded by its own spec.
        message = moduleSpec.message(decoded.raw) as { type: CommandType; requestId?: string };
      } else if (decoded.kind === 'unknown') {
        const id = (decoded.raw as { requestId?: unknown }).requestId;
        this.send({ type: 'error', ...(typeof id === 'string' ? { inReplyTo: id } : {}), domain: 'protocol', code: 'unsupportedCommand', message: `this engine does not support "${decoded.type}"` });
        return;
      } else message = decoded.value;
      requestId = message.requestId;
      type = message.type;
    } catch (e) {
      const id = raw && typeof raw === 'object' ? (raw as { requestId?: unknown }).requestId : undefined;
      const inReplyTo = typeof id === 'string' ? id : undefined;
      this.send({ type: 'error', inReplyTo, ...(e instanceof EnvelopeError ? invalidCommand(e) : toWireError(e, (x) => this.log(x))) });
      return;
    }
    const spec = this.services.commands.get(type)!;
    const missing = missingCapabilities(this.grant, requiredCapabilities(spec as never, message as never));
    if (missing.length > 0) {
      this.send({
        type: 'error', inReplyTo: requestId, domain: 'protocol', code: 'capabilityDenied',
        message: `${this.grant.holder} may not ${type}: it needs ${missing.join(', ')}`, details: { missing },
      });
      return;
    }
    let narrow = (v: unknown) => v;
    const reply = (value: unknown) => {
      try {
        this.send({ type: 'result', inReplyTo: requestId, value: spec.result(narrow(value)) });
      } catch (e) {
        this.log(e); // a handler answered outside its contract: that is a bug, reported as internal
        this.send({ type: 'error', inReplyTo: requestId, ...toWireError(new Error(`${type} answered an invalid result`), () => undefined) });
      }
    };
    const fail = (e: unknown) => this.send({ type: 'error', inReplyTo: requestId, ...toWireError(e, (x) => this.log(x)) });
    // The command's flags (../../protocol/commands/define.ts): a read-only store refuses writers; exclusive ones wait their turn.
    if (this.services.store.readOnly && !spec.readOnly) return fail(this.services.store.readOnlyError());
    const run = () => {
      // A workspace-bound session names only its workspace's threads and sees only them (./thread-scope.ts).
      if (this.scope) narrow = this.scope.check(type, message as unknown as Record<string, unknown>, this.grant.holder);
      // A grant with modes (an MCP client's) may not start a run above them (./thread-modes.ts).
      checkRunCommandModes(this.services, this.grant, type, message as { threadId?: unknown });
      const handler = this.services.handlers.get(type);
      if (!handler) throw new Error(`no handler for ${type}`);
      return (handler as (ctx: unknown, cmd: unknown) => unknown)({ services: this.services, session: this }, message);
    };
    const key = exclusiveKey(spec, message as { threadId?: unknown });
    try {
      const out = key === null ? run() : runExclusive(this.services, key, run);
      if (out instanceof Promise) out.then(reply, fail);
      else reply(out);
    } catch (e) {
      fail(e);
    }
  }

  settings(): SettingsView {
    const { host } = this.services;
    const model = host.model();
    const memento = mementoOf(host);
    const recent = recentModels(memento);
    return {
      model, models: host.modelChoices(), demoNotice: isDemoModel(model) ? DEMO_MODEL_NOTICE : null,
      recent: groupRecent(recent.includes(model) ? recent : [model, ...recent], compatEndpoints(host.providerSettings()).map((e) => e.name)),
      ui: uiPreferences(memento),
    };
  }

  /** Registers a subscription under `key` (replacing one with the same key). */
  addSubscription(key: string, stop: () => void): void {
    this.dropSubscription(key);
    this.subscriptions.set(key, stop);
  }

  dropSubscription(key: string): void {
    const stop = this.subscriptions.get(key);
    this.subscriptions.delete(key);
    stop?.();
  }

  private log(e: unknown): void {
    this.services.host.notify({ level: 'error', source: 'protocol', message: `${this.grant.holder}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` });
  }

  dispose(): void {
    if (this.closed) return;
    for (const key of [...this.subscriptions.keys()]) this.dropSubscription(key);
    for (const stop of this.stops) stop();
    this.closed = true;
    this.onClose();
  }
}
