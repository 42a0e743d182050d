/**
 * A thread's mode ceiling: the highest modes it may ever run in, as a grant's levels
 * (./grant-modes.ts), fixed when a subagent's thread is spawned (`thread.ceilingSet`, read from
 * the event log, so every engine on the database sees it). A child's limits are its parent's:
 * the parent's permission mode and work mode (clamped to the parent's own ceiling), its thread
 * rules, and a ceiling no higher than the parent's ceiling nor the parent's modes — so a
 * grandchild inherits it. Every call of the thread is decided in its modes clamped to the ceiling
 * (./service.ts), and a command that would raise the thread above it is refused with the grant
 * check's own `GrantModeError` (`protocol/capabilityDenied`), which names the ceiling.
 */
import type { Grant, GrantModes, InteractionLevel, RuntimeLevel } from '../../protocol/commands/grants';
import type { VoxStore } from '../store/store';
import type { AllowRuleJson } from './always-allow';
import { checkWithinGrant, GrantModeError, levelsOf, type ThreadModes } from './grant-modes';
import { threadRuleJson } from './rule-writes';

/** What a subagent's thread starts with, taken from its parent when it is spawned. */
export interface ChildLimits { modes: ThreadModes; rules: AllowRuleJson[]; ceiling: GrantModes }

/** The thread's ceiling (the lowest of every `thread.ceilingSet` it has: a ceiling is never raised), or null when it has none. */
export function threadCeiling(store: VoxStore, threadId: string): GrantModes | null {
  const rows = store.db.prepare("SELECT payload FROM events WHERE thread_id = ? AND type = 'thread.ceilingSet'").all(threadId) as { payload: string }[];
  let c: GrantModes | null = null;
  for (const r of rows) c = narrower(c, (JSON.parse(r.payload) as { ceiling: GrantModes }).ceiling);
  return c;
}

/** The lower of two ceilings, level by level (null: no ceiling). */
export function narrower(a: GrantModes | null, b: GrantModes): GrantModes {
  if (!a) return { runtime: b.runtime, interaction: b.interaction };
  return { runtime: Math.min(a.runtime, b.runtime) as RuntimeLevel, interaction: Math.min(a.interaction, b.interaction) as InteractionLevel };
}

/** The ceiling as a grant, so the one grant check (./grant-modes.ts checkWithinGrant) applies it. */
function ceilingGrant(threadId: string, ceiling: GrantModes): Grant {
  return { capabilities: [], holder: `thread ${threadId} (a subagent, held to the mode ceiling its parent's limits set when it was spawned)`, modes: ceiling };
}

/** Refuses modes above the thread's ceiling (`GrantModeError`); a thread without one may take any. */
export function checkWithinCeiling(store: VoxStore, threadId: string, m: ThreadModes, what: string): void {
  const c = threadCeiling(store, threadId);
  if (c) checkWithinGrant(ceilingGrant(threadId, c), m, what);
}

/** The modes a thread runs in under its ceiling: modes above it become Ask every time, and Plan when the ceiling is Plan. */
export function clampToCeiling(ceiling: GrantModes | null, m: ThreadModes): ThreadModes {
  if (!ceiling) return m;
  try {
    checkWithinGrant(ceilingGrant('', ceiling), m, 'run');
    return m;
  } catch (e) {
    if (!(e instanceof GrantModeError)) throw e;
  }
  const planOnly = ceiling.runtime === 0 || ceiling.interaction === 0;
  return { permissionMode: 'ask', workMode: planOnly ? 'plan' : m.workMode };
}

/** A child's limits from its parent's modes in force (`parent`, as the parent's calls are decided) and the parent's ceiling and thread rules. */
export function childLimits(store: VoxStore, parentThreadId: string, parent: ThreadModes): ChildLimits {
  const parentCeiling = threadCeiling(store, parentThreadId);
  const modes = clampToCeiling(parentCeiling, parent);
  return { modes, rules: threadRuleJson(store, parentThreadId), ceiling: narrower(parentCeiling, levelsOf(modes)) };
}
