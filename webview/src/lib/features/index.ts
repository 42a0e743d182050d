/**
 * The chat's features (./feature.ts), in the order the controller installs them — which is the
 * order their hooks run in: at start settings are asked for first, then the thread list, the
 * open thread's subscriptions, the prompt history and the MCP servers; a new engine session asks
 * again in the same order.
 */
import type { VoxEventType } from '../../../../src/protocol/events';
import type { IntentsOf } from './feature';
import { FeatureRegistry } from './registry';
import { approvalsFeature } from './approvals';
import { backgroundFeature } from './background';
import { branchesFeature } from './branches';
import { checkpointsFeature } from './checkpoints';
import { compactionFeature } from './compaction';
import { contextFeature } from './context';
import { costsFeature } from './costs';
import { draftsFeature } from './drafts';
import { handoffFeature } from './handoff';
import { hostCommandsFeature } from './host-commands';
import { mcpFeature } from './mcp';
import { mcpAppsFeature } from './mcp-apps';
import { permissionsFeature } from './permissions';
import { plansFeature } from './plans';
import { promptsFeature } from './prompts';
import { queueFeature } from './queue';
import { rateLimitFeature } from './rate-limit';
import { runsFeature } from './runs';
import { salvageFeature } from './salvage';
import { searchFeature } from './search';
import { settingsFeature } from './settings';
import { threadsFeature } from './threads';

export const FEATURES = [
  settingsFeature,
  permissionsFeature,
  threadsFeature,
  runsFeature,
  promptsFeature,
  mcpFeature,
  queueFeature,
  rateLimitFeature,
  backgroundFeature,
  salvageFeature,
  handoffFeature,
  approvalsFeature,
  plansFeature,
  branchesFeature,
  checkpointsFeature,
  compactionFeature,
  contextFeature,
  costsFeature,
  draftsFeature,
  mcpAppsFeature,
  searchFeature,
  hostCommandsFeature,
] as const;

/**
 * Stored events the chat does not show, so no feature owns them: restores and prunes show in the
 * extension's Checkpoints view (src/extension/checkpoints-view.ts; the chat's own restore follows
 * its command answers, ./checkpoints.ts); a run's claim by another process and the report of its
 * background work change nothing the thread view draws; a thread's permission rules (an "Always
 * allow" for this thread) show with the other rules (getPermissions); a subagent thread's mode
 * ceiling shows as the mode it is held to.
 */
export const UNSHOWN_EVENTS: readonly VoxEventType[] = ['checkpoint.restored', 'checkpoint.pruned', 'run.claimed', 'background.reported', 'thread.permissionRulesSet', 'thread.imported', 'thread.ceilingSet'];

/** The reducers of the chat's features (../thread-state.ts applies events through it by default). */
export const DEFAULT_REGISTRY = new FeatureRegistry(FEATURES);

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every intent of the chat's features, as the controller carries them. */
export type DefaultIntents = UnionToIntersection<IntentsOf<(typeof FEATURES)[number]>>;
