/** What a protocol handler receives: the engine's services and the narrow face of its session. */
import type { CommandOf, CommandResult, CommandType } from '../../../protocol/commands/index';
import type { EngineServices } from '../../services';

export type { SessionPort } from '../../module';
import type { SessionPort } from '../../module';

export interface HandlerContext {
  services: EngineServices;
  session: SessionPort;
}

export type Handler<K extends CommandType> = (ctx: HandlerContext, cmd: CommandOf<K>) => CommandResult<K> | Promise<CommandResult<K>>;

/** The handlers of one area: exactly its commands. */
export type HandlerTable<K extends CommandType> = { [P in K]: Handler<P> };
