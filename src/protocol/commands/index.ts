/**
 * Every command of the protocol, by area, in one table; the envelope that decodes them; and the
 * types clients and handlers derive from it (`CommandType`, `CommandParams<K>`,
 * `CommandResult<K>`). An unknown command type decodes as `unknown` (answered
 * `protocol/unsupportedCommand`), never as a crash.
 */
import { forwardCompatible, type ForwardCompatibleEnvelope } from '../wire/envelope';
import type { Infer } from '../wire/validators';
import { approvalCommands } from './approvals';
import { checkpointCommands } from './checkpoints';
import { contextCommands } from './context';
import { prepareCommands } from './prepare';
import { queueCommands } from './queue';
import { reviewCommands } from './review';
import { runCommands } from './runs';
import { settingsCommands } from './settings';
import { threadCommands } from './threads';
import { variantCommands } from './variants';
import { worktreeCommands } from './worktrees';
import { modelCommands } from './models';
import { permissionCommands } from './permissions';
import { branchCommands } from './branches';
import { ruleCommands } from './rules';
import { historyCommands } from './history';
import { bundleCommands } from './bundles';
import { compactionCommands } from './compaction';
import { importerCommands } from './importers';
import { searchCommands } from './search';
import { handoffCommands } from './handoff';
import { mcpCommands } from './mcp';
import { mcpAppCommands } from './mcp-apps';
import { forkCommands } from './forks';
import { ledgerCommands } from './ledger';

export const COMMANDS = {
  ...threadCommands,
  ...runCommands,
  ...queueCommands,
  ...approvalCommands,
  ...settingsCommands,
  ...prepareCommands,
  ...checkpointCommands,
  ...worktreeCommands,
  ...variantCommands,
  ...contextCommands,
  ...modelCommands,
  ...reviewCommands,
  ...permissionCommands,
  ...branchCommands,
  ...ruleCommands,
  ...historyCommands,
  ...bundleCommands,
  ...compactionCommands,
  ...importerCommands,
  ...searchCommands,
  ...handoffCommands,
  ...mcpCommands,
  ...mcpAppCommands,
  ...forkCommands,
  ...ledgerCommands,
};

/** The areas, for docs and the CLI's help (each command belongs to exactly one). */
export const COMMAND_AREAS = {
  threads: Object.keys(threadCommands),
  runs: Object.keys(runCommands),
  queue: Object.keys(queueCommands),
  approvals: Object.keys(approvalCommands),
  settings: [...Object.keys(settingsCommands), ...Object.keys(prepareCommands)],
  checkpoints: Object.keys(checkpointCommands),
  worktrees: Object.keys(worktreeCommands),
  variants: Object.keys(variantCommands),
  context: Object.keys(contextCommands),
  models: Object.keys(modelCommands),
  review: Object.keys(reviewCommands),
  permissions: Object.keys(permissionCommands),
  branches: Object.keys(branchCommands),
  rules: Object.keys(ruleCommands),
  history: Object.keys(historyCommands),
  bundles: Object.keys(bundleCommands),
  compaction: Object.keys(compactionCommands),
  importers: Object.keys(importerCommands),
  search: Object.keys(searchCommands),
  handoff: Object.keys(handoffCommands),
  mcp: Object.keys(mcpCommands),
  mcpApps: Object.keys(mcpAppCommands),
  forks: Object.keys(forkCommands),
  ledger: Object.keys(ledgerCommands),
} as const;

type Commands = typeof COMMANDS;
export type CommandType = keyof Commands;
/** A whole command message (`type`, `requestId?`, params). */
export type CommandOf<K extends CommandType> = Infer<Commands[K]['message']>;
/** The params of a command (the message without `type` and `requestId`). */
export type CommandParams<K extends CommandType> = Omit<CommandOf<K>, 'type' | 'requestId'>;
export type CommandResult<K extends CommandType> = Infer<Commands[K]['result']>;
export type ClientCommand = { [K in CommandType]: CommandOf<K> }[CommandType];

export const COMMAND_TYPES = Object.keys(COMMANDS) as CommandType[];

const decoders = Object.fromEntries(COMMAND_TYPES.map((t) => [t, COMMANDS[t].message])) as { [K in CommandType]: Commands[K]['message'] };

/** Decodes a client message (text or parsed) into a known command, or `unknown`. */
export const commandEnvelope: ForwardCompatibleEnvelope<ClientCommand> = forwardCompatible(decoders) as ForwardCompatibleEnvelope<ClientCommand>;

export function isCommandType(type: string): type is CommandType {
  return Object.prototype.hasOwnProperty.call(COMMANDS, type);
}

export { MAX_MODEL_REF_CHARS, MAX_PROMPT_CHARS, MAX_TITLE_CHARS } from './common';
export { CAPABILITIES, holds, missingCapabilities, ownerGrant, readOnlyGrant, type Capability, type Grant } from './grants';
export { requiredCapabilities, type CommandSpec } from './define';
export { DEFAULT_THREAD_PAGE, MAX_THREAD_PAGE, type MessageView, type RunSummary, type ThreadSummary } from './threads';
export type { ActiveRun } from './runs';
export type { QueuedPromptView } from './queue';
export type { ApprovalRequestView } from './approvals';
export type { ModelChoice, RecentGroup, SettingsView, UiPreferencesView } from './settings';
export { CONNECT_PROVIDER_IDS, UI_PREFERENCE_KEYS, type ConnectionTestView, type ConnectProviderId, type ModelListView, type UiPreferenceKey } from './models';
export type { PreparedModel } from './prepare';
export type { CaptureReceiptView, ChangedFileView, CheckpointView, FileDiffView, RestoredFilesView } from './checkpoints';
export type { WorktreeView } from './worktrees';
export type { PermissionsView, PlanView } from './permissions';
export { MAX_VARIANTS, type VariantPoolView, type VariantView } from './variants';
export type { ReviewFileView, ReviewHunkView } from './review';
export { MAX_TREE_MESSAGES, type BranchView } from './branches';
export { MAX_PROMPT_HISTORY, type PromptHistoryEntry } from './history';
