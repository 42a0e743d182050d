/**
 * Every command's handler, by area. The type makes the table total: a command declared in the
 * protocol without a handler here (or a handler without a command) does not compile.
 */
import type { CommandType } from '../../../protocol/commands/index';
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
import { compactionHandlers } from './compaction';
import { importerHandlers } from './importers';
import { searchHandlers } from './search';
import { handoffHandlers } from './handoff';
import { mcpHandlers } from './mcp';
import { mcpAppHandlers } from './mcp-apps';
import { forkHandlers } from './forks';

export type { Handler, HandlerContext, SessionPort } from './types';

export const HANDLERS: { [K in CommandType]: Handler<K> } = {
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
  ...compactionHandlers,
  ...handoffHandlers,
  ...mcpHandlers,
  ...mcpAppHandlers,
  ...forkHandlers,
  ...historyHandlers,
  ...importerHandlers,
  ...searchHandlers,
};
