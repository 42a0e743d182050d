/**
 * EngineClient: a typed client of the protocol. `call('listThreads', {limit: 20})` sends the
 * command and resolves with its result (decoded by the command's result validator) or rejects
 * with a `ClientError` carrying the wire error's {domain, code, message, details}; `on(type, …)`
 * receives pushed updates (events, turn chunks, approvals, change notices). It depends on the
 * protocol only, over a `Transport`: in process (the VS Code views and the CLI: no serialisation,
 * see `inProcessTransport`) or, later, a socket (guest page, MCP bridge).
 */
import { COMMANDS, type CommandParams, type CommandResult, type CommandType } from '../protocol/commands/index';
import type { WireError } from '../protocol/errors';
import type { EngineUpdate, UpdateOf } from '../protocol/updates';

/** Commands a client may have waiting for an answer; a call beyond it is refused (a client bug: replies are not being read). */
export const MAX_PENDING_CALLS = 10_000;

export interface Transport {
  send(message: { type: string; requestId: string } & Record<string, unknown>): void;
  /** Calls `listener` with every update from the engine. */
  onUpdate(listener: (u: EngineUpdate) => void): void;
  close(): void;
}

/** The failure of a call, as the engine reported it. */
export class ClientError extends Error {
  override readonly name = 'ClientError';
  readonly domain: string;
  readonly code: string;
  readonly details: unknown;
  constructor(e: WireError, readonly command: string) {
    super(e.message);
    this.domain = e.domain;
    this.code = e.code;
    this.details = e.details;
  }

  is(domain: string, code: string): boolean {
    return this.domain === domain && this.code === code;
  }
}

interface Pending { type: CommandType; resolve(v: unknown): void; reject(e: unknown): void }

type Listener = (u: EngineUpdate) => void;

export class EngineClient {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private next = 1;
  private closed = false;

  constructor(private readonly transport: Transport, private readonly idPrefix = 'c') {
    transport.onUpdate((u) => this.receive(u));
  }

  /** Sends a command; resolves with its decoded result, rejects with a ClientError. */
  call<K extends CommandType>(type: K, params: CommandParams<K>): Promise<CommandResult<K>> {
    if (this.closed) return Promise.reject(new ClientError({ domain: 'protocol', code: 'closed', message: 'the connection to the Vox engine is closed' }, type));
    if (this.pending.size >= MAX_PENDING_CALLS) {
      return Promise.reject(new ClientError({ domain: 'protocol', code: 'closed', message: `more than ${MAX_PENDING_CALLS} calls are waiting for the engine` }, type));
    }
    const requestId = `${this.idPrefix}${this.next++}`;
    return new Promise<CommandResult<K>>((resolve, reject) => {
      this.pending.set(requestId, { type, resolve: resolve as (v: unknown) => void, reject });
      try {
        this.transport.send({ ...(params as Record<string, unknown>), type, requestId });
      } catch (e) {
        this.pending.delete(requestId);
        reject(e);
      }
    });
  }

  /** Receives every update of `type`; returns the unsubscribe function. */
  on<K extends EngineUpdate['type']>(type: K, listener: (u: UpdateOf<K>) => void): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener as Listener);
    return () => void set.delete(listener as Listener);
  }

  private receive(u: EngineUpdate): void {
    if ((u.type === 'result' || u.type === 'error') && u.inReplyTo !== undefined) {
      const p = this.pending.get(u.inReplyTo);
      if (p) {
        this.pending.delete(u.inReplyTo);
        if (u.type === 'error') p.reject(new ClientError(u, p.type));
        else {
          try {
            p.resolve(COMMANDS[p.type].result(u.value));
          } catch (e) {
            p.reject(new ClientError({ domain: 'protocol', code: 'invalidPayload', message: `the engine's answer to ${p.type} did not decode: ${(e as Error).message}` }, p.type));
          }
        }
        return;
      }
    }
    for (const l of [...(this.listeners.get(u.type) ?? [])]) {
      try {
        l(u);
      } catch (e) {
        console.error(`[vox] a listener of ${u.type} failed:`, e);
      }
    }
  }

  /** Rejects the calls still waiting and closes the transport. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new ClientError({ domain: 'protocol', code: 'closed', message: 'the connection to the Vox engine was closed' }, p.type));
    }
    this.transport.close();
  }
}

/** What an in-process engine offers a transport: a session taking raw messages. */
export interface InProcessSession { handle(message: unknown): void; dispose(): void }

/** A transport to an engine in this process; `connect` opens the session (e.g. `(sink) => engine.connect(sink, grant)`). */
export function inProcessTransport(connect: (sink: (u: EngineUpdate) => void) => InProcessSession): Transport {
  const listeners: Array<(u: EngineUpdate) => void> = [];
  const session = connect((u) => {
    for (const l of listeners) l(u);
  });
  return {
    send: (m) => session.handle(m),
    onUpdate: (l) => void listeners.push(l),
    close: () => session.dispose(),
  };
}
