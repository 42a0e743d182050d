/**
 * The permissions a turn started with: rules read at the start of a turn cannot be widened by
 * that same turn. A turn's agent may write `.vox/permissions.json` or `.vscode/settings.json`
 * (a protected path, so only after the user approved it); what it loosened applies from the next
 * turn, while what it tightened applies at once. Per call, the rules in force are the turn-start
 * snapshot combined with the current sources: deny and ask rules of either, allow rules only when
 * both hold them (or the user added one with "Always allow" meanwhile), the stricter settings mode
 * and approval policy, every protected path of either, and a broken source from either. A thread's
 * own mode and rules are not snapshotted: only the user sets them (the chat, "Always allow").
 */
import { ApprovalPolicy, type ApprovalMode } from '../approvals/approval';
import type { ToolClass } from '../tools/types';
import type { ProtectedPath } from './protected-paths';
import type { PermissionMode, PermissionRule, PermissionRulesError } from './rules';

/** The agent-writable permission sources as read at one moment. */
export interface PermissionSources {
  /** The settings' mode (null: none set). */
  settingsMode: PermissionMode | null;
  policy: ApprovalPolicy;
  /** The settings' and the workspace file's rules, in that order. */
  rules: readonly PermissionRule[];
  protectedPaths: readonly ProtectedPath[];
  broken: PermissionRulesError | null;
}

export interface TurnSnapshot {
  threadId: string;
  sources: PermissionSources;
  /** Labels of allow rules the user added during the turn ("Always allow" for the workspace). */
  userAllowed: Set<string>;
}

/** Most turns remembered at once (turns end and are forgotten; beyond this the oldest is dropped). */
export const MAX_TURN_SNAPSHOTS = 256;

const MODE_STRICTNESS: Record<PermissionMode, number> = { ask: 0, autoEdits: 1, fullAuto: 2 };
const CLASSES: readonly ToolClass[] = ['read', 'write', 'execute'];

function stricterMode(a: PermissionMode, b: PermissionMode): PermissionMode {
  return MODE_STRICTNESS[a] <= MODE_STRICTNESS[b] ? a : b;
}

function stricterPolicy(a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy {
  const modes: Partial<Record<ToolClass, ApprovalMode>> = {};
  for (const c of CLASSES) modes[c] = a.modeFor(c) === 'ask' || b.modeFor(c) === 'ask' ? 'ask' : 'auto';
  return new ApprovalPolicy(modes);
}

/** The sources in force for a call of a turn: the turn-start snapshot, narrowed (never widened) by the current sources. */
export function combineWithTurnStart(snapshot: TurnSnapshot, now: PermissionSources): PermissionSources {
  const start = snapshot.sources;
  const startAllowed = new Set(start.rules.filter((r) => r.action === 'allow').map((r) => r.label));
  const nowLabels = new Set(now.rules.map((r) => `${r.action}\u0000${r.label}`));
  const rules = [
    ...now.rules.filter((r) => r.action !== 'allow' || startAllowed.has(r.label) || snapshot.userAllowed.has(r.label)),
    // A deny or ask rule the turn removed still holds until the turn ends.
    ...start.rules.filter((r) => r.action !== 'allow' && !nowLabels.has(`${r.action}\u0000${r.label}`)),
  ];
  const globs = new Set(now.protectedPaths.map((p) => p.glob));
  return {
    // No mode set counts as Ask every time, the default.
    settingsMode: stricterMode(start.settingsMode ?? 'ask', now.settingsMode ?? 'ask'),
    policy: stricterPolicy(start.policy, now.policy),
    rules,
    protectedPaths: [...now.protectedPaths, ...start.protectedPaths.filter((p) => !globs.has(p.glob))],
    broken: now.broken ?? start.broken,
  };
}
