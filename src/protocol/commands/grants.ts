/**
 * What a client may do. Every command declares the capabilities it requires (./define.ts); every
 * client session carries a grant, and a command above it is refused with `protocol/
 * capabilityDenied` before its handler runs. The VS Code views and the CLI connect as `owner`; a
 * guest page or an MCP client will be given a narrower grant through the same code path.
 *
 *   read          see threads, runs, checkpoints, worktrees, variants, settings; subscribe
 *   write         change what exists: prompt an existing thread, cancel runs, rename, capture
 *   startThreads  create threads (a prompt without a thread, variants, a new thread)
 *   owner         act for the person whose machine this is: approve tool calls, restore or adopt
 *                 files into the workspace, remove worktrees, prune, change settings
 * `owner` implies every other capability.
 */

export const CAPABILITIES = ['read', 'write', 'startThreads', 'owner'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * The highest modes a grant's holder may run threads in (an MCP client's grant: SPEC 5.2). Runtime:
 * readOnly 0 (the thread runs in Plan mode: only read tools run) < default 1 (Ask every time: the
 * user approves each write or command) < fullAccess 2 (Auto-approve edits or Full auto).
 * Interaction: plan 0 (the thread answers with a plan) < default 1 (Act). A grant without modes
 * (the VS Code views, the CLI) is not limited by them. The engine enforces them where a thread
 * gets its modes (a new thread's prompt, a prompt to an existing thread, Plan → Act).
 */
export interface GrantModes {
  readonly runtime: RuntimeLevel;
  readonly interaction: InteractionLevel;
}
export type RuntimeLevel = 0 | 1 | 2;
export type InteractionLevel = 0 | 1;

export interface Grant {
  readonly capabilities: readonly Capability[];
  /** Who holds it, for error messages and logs (e.g. "VS Code", "vox CLI", "guest Ada"). */
  readonly holder: string;
  /** The highest thread modes it allows (absent: no limit beyond the capabilities). */
  readonly modes?: GrantModes;
  /**
   * Which threads it reaches. 'workspace': only those of the engine's workspace (an MCP client
   * unless the user granted all workspaces); the id of another workspace's thread is refused
   * exactly like an id no thread has (`store/notFound`), lists leave such threads out. Absent:
   * every thread in the database (the VS Code views, the CLI).
   */
  readonly threads?: 'workspace';
  /**
   * No one can answer an approval where this holder's turns run (an MCP client of `vox mcp
   * serve`: the engine is in that process, no window sees its approvals). A turn whose thread
   * would ask (Act in Ask every time or Auto-approve edits) is refused at start (`approval/noApprover`).
   */
  readonly noApprover?: true;
}

export const OWNER_CAPABILITIES: readonly Capability[] = CAPABILITIES;
export const READ_ONLY_CAPABILITIES: readonly Capability[] = ['read'];

export function ownerGrant(holder: string): Grant {
  return { capabilities: OWNER_CAPABILITIES, holder };
}

export function readOnlyGrant(holder: string): Grant {
  return { capabilities: READ_ONLY_CAPABILITIES, holder };
}

export function holds(grant: Grant, cap: Capability): boolean {
  return grant.capabilities.includes('owner') || grant.capabilities.includes(cap);
}

/** The capabilities of `needed` that `grant` lacks (empty: allowed). */
export function missingCapabilities(grant: Grant, needed: readonly Capability[]): Capability[] {
  return needed.filter((c) => !holds(grant, c));
}
