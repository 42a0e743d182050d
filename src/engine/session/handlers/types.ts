/** What a protocol handler receives: the engine's services and the narrow face of its session. */
import type { CommandOf, CommandResult, CommandType } from '../../../protocol/commands/index';
import type { SettingsView } from '../../../protocol/commands/settings';
import type { EngineUpdate } from '../../../protocol/updates';
import type { EngineServices } from '../../services';
import type { Grant } from '../../../protocol/commands/grants';

export interface SessionPort {
  /** The grant the session was connected with (its capabilities were checked already; its modes are checked where a thread gets them). */
  readonly grant: Grant;
  send(u: EngineUpdate): void;
  /** Registers a subscription under `key`, replacing (and stopping) one with the same key. */
  addSubscription(key: string, stop: () => void): void;
  dropSubscription(key: string): void;
  settings(): SettingsView;
}

export interface HandlerContext {
  services: EngineServices;
  session: SessionPort;
}

export type Handler<K extends CommandType> = (ctx: HandlerContext, cmd: CommandOf<K>) => CommandResult<K> | Promise<CommandResult<K>>;

/** The handlers of one area: exactly its commands. */
export type HandlerTable<K extends CommandType> = { [P in K]: Handler<P> };
