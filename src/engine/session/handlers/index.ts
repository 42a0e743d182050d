/**
 * The handlers of the areas that have no module of their own yet, by area, as one module
 * (`areas`). The capability modules (../../modules.ts) bring the rest; the engine checks that
 * every command of the protocol has exactly one handler (../../module.ts `handlerTable`).
 */
import type { CommandType } from '../../../protocol/commands/index';
import type { EngineModule } from '../../module';
import { approvalHandlers } from './approvals';
import { checkpointHandlers } from './checkpoints';
import { contextHandlers } from './context';
import { prepareHandlers } from './prepare';
import { queueHandlers } from './queue';
import { reviewHandlers } from './review';
import { runHandlers } from './runs';
import { settingsHandlers } from './settings';
import { threadHandlers } from './threads';
import type { Handler } from './types';
import { variantHandlers } from './variants';
import { worktreeHandlers } from './worktrees';
import { modelHandlers } from './models';
import { permissionHandlers } from './permissions';
import { branchHandlers } from './branches';
import { ruleHandlers } from './rules';
import { historyHandlers } from './history';
import { bundleHandlers } from './bundles';
import { importerHandlers } from './importers';
import { handoffHandlers } from './handoff';
import { mcpHandlers } from './mcp';
import { forkHandlers } from './forks';

export type { Handler, HandlerContext, SessionPort } from './types';

/** Commands whose handlers are in their capability's module. */
type ModuleCommands = 'compactThread' | 'listCompactions' | 'searchThreads' | 'setMcpAppState' | 'getUsage' | 'getThreadCosts' | 'grantBalance' | 'setBudget' | 'setPrice' | 'getPrice';

export const HANDLERS: { [K in Exclude<CommandType, ModuleCommands>]: Handler<K> } = {
  ...threadHandlers,
  ...runHandlers,
  ...queueHandlers,
  ...approvalHandlers,
  ...settingsHandlers,
  ...prepareHandlers,
  ...checkpointHandlers,
  ...worktreeHandlers,
  ...variantHandlers,
  ...contextHandlers,
  ...modelHandlers,
  ...reviewHandlers,
  ...permissionHandlers,
  ...branchHandlers,
  ...ruleHandlers,
  ...bundleHandlers,
  ...handoffHandlers,
  ...mcpHandlers,
  ...forkHandlers,
  ...historyHandlers,
  ...importerHandlers,
};

export const areasModule: EngineModule = { name: 'areas', deps: [], handlers: HANDLERS as EngineModule['handlers'] };
