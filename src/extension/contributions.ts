/**
 * Every contribution of the extension, by area, in the order extension.ts installs them (and
 * package.json lists their commands): the chat and its palette commands, long runs, search and
 * import, then the Source Control views, review and comparison, rules, MCP both ways, and the
 * spend in the status bar.
 */
import { compareBranches } from './compare/compare-panel';
import { chatCommands } from './commands';
import { checkpoints } from './checkpoints-view';
import { importSessionsCommand } from './import-sessions';
import { mcpServersView } from './mcp/commands';
import { mcpServer } from './mcp-server-host';
import { review } from './review/register';
import { rules } from './rules-view';
import { permissionRuleCommands } from './permission-rule-commands';
import { runControlCommands } from './run-control-commands';
import { searchThreadsCommand } from './search-threads';
import { variants } from './variants-view';
import { usagePanel } from './usage/usage-panel';
import { usageStatus } from './usage/usage-status';

export const CONTRIBUTIONS = {
  chat: chatCommands,
  runControl: runControlCommands,
  permissionRules: permissionRuleCommands,
  searchThreads: searchThreadsCommand,
  importSessions: importSessionsCommand,
  checkpoints,
  variants,
  compareBranches,
  review,
  rules,
  mcpServersView,
  mcpServer,
  usageStatus,
  usagePanel,
} as const;
