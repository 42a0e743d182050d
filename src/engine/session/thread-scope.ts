/**
 * A workspace-bound session (`Grant.threads === 'workspace'`: an MCP client unless granted every
 * workspace) reaches only the threads of its engine's workspace (../store/workspace-reads.ts).
 * This is the one place it is enforced, for every command such a session sends:
 *
 *   - the thread ids a command names (`threadId`, `parentThreadId`, a thread @-mention's target)
 *     must be live threads of the workspace; any other id — another workspace's thread, an id no
 *     thread has — gets the same `store/notFound`, so the answer tells nothing about other
 *     workspaces;
 *   - lists are narrowed to the workspace's threads (thread pages and search in their queries,
 *     the rest here, from the answer), and so are pushed updates naming a thread;
 *   - a command addressed by something else (a run, a turn, a queue entry, a git ref, a variant
 *     pool, a tool call) is refused to such a session (`protocol/capabilityDenied`, naming the
 *     grant that lifts it): those ids are not mapped to their threads here.
 *
 * RULES names every command (the type makes a new command choose), so none slips through.
 */
import type { CommandType } from '../../protocol/commands/index';
import type { Grant } from '../../protocol/commands/grants';
import type { EngineUpdate } from '../../protocol/updates';
import { VoxError } from '../../protocol/wire/vox-error';
import { StoreError } from '../store/errors';
import type { VoxStore } from '../store/store';
import { threadWorkspace } from '../store/workspace-reads';

/** A command refused to a workspace-bound session. */
class ScopeError extends VoxError<'protocol'> {
  readonly domain = 'protocol' as const;
}

type InScope = (threadId: string) => boolean;
type Narrow = (value: never, inScope: InScope) => unknown;

/**
 * neutral: names no thread (settings, models, rules, MCP servers, worktrees) or only creates in
 * this workspace; thread: its thread fields are checked; refuse: not open to a bound session;
 * {narrow}: thread fields checked, then the answer narrowed.
 */
type Rule = 'neutral' | 'thread' | 'refuse' | { narrow: Narrow };

const byThread = <T extends { threadId: string | null }>(xs: readonly T[], inScope: InScope) => xs.filter((x) => x.threadId !== null && inScope(x.threadId));
const narrow = <V>(f: (value: V, inScope: InScope) => V): { narrow: Narrow } => ({ narrow: f as Narrow });

type Threaded = { threadId: string | null };
const RULES: Record<CommandType, Rule> = {
  // threads
  listChildThreads: narrow((v: { threads: Array<{ id: string }> }, s) => ({ ...v, threads: v.threads.filter((t) => s(t.id)) })),
  listThreads: 'thread', getThread: 'thread', subscribeThread: 'thread', watchThreads: 'neutral', unsubscribe: 'neutral',
  resolveThreadId: narrow((v: { threadId: string | null }, s) => ({ threadId: v.threadId !== null && s(v.threadId) ? v.threadId : null })),
  createThread: 'thread', renameThread: 'thread', deleteThread: 'thread', forkThread: 'thread',
  // runs and the queue
  sendPrompt: 'thread', cancelRun: 'refuse', cancelAllRuns: 'refuse', resumeRun: 'refuse', snoozeRun: 'refuse', setAutoResume: 'refuse', subscribeTurn: 'refuse',
  listRuns: narrow((v: { runs: Threaded[] }, s) => ({ runs: byThread(v.runs, s) })),
  listWaits: narrow((v: { waits: Threaded[] }, s) => ({ waits: byThread(v.waits, s) })),
  listQueue: 'thread', getQueued: 'refuse', editQueued: 'thread', moveQueued: 'thread', cancelQueued: 'thread', steerQueued: 'thread',
  listApprovals: narrow((v: { approvals: Threaded[] }, s) => ({ approvals: byThread(v.approvals, s) })),
  respondToApproval: 'refuse', previewToolCall: 'refuse',
  // checkpoints, worktrees, variants
  captureCheckpoint: 'thread', listCheckpointFiles: 'thread', restoreCheckpoint: 'thread', previewRestore: 'thread',
  listCheckpoints: narrow((v: { checkpoints: Threaded[]; threads: Threaded[] }, s) => ({ checkpoints: byThread(v.checkpoints, s), threads: byThread(v.threads, s) })),
  diffCheckpoints: 'refuse', readCheckpointFile: 'refuse', undoRestore: 'refuse', listRestorePoints: 'refuse', listOrphanedCheckpoints: 'refuse', pruneCheckpoints: 'refuse',
  createWorktree: 'neutral', listWorktrees: 'neutral', removeWorktree: 'neutral',
  startVariants: 'thread', listVariants: narrow((v: { pools: Pool[] }, s) => ({ pools: poolsIn(v.pools, s) })), watchVariants: 'neutral',
  diffVariant: 'refuse', adoptVariant: 'refuse', discardVariant: 'refuse', clearVariants: 'refuse', cancelVariants: 'refuse',
  // context, models, settings
  estimateContext: 'thread', getSettings: 'neutral', setModel: 'neutral', prepareModel: 'neutral',
  suggestMentions: narrow((v: { items: Array<{ kind: string; target: string | null }> }, s) => ({ items: v.items.filter((m) => m.kind !== 'thread' || (m.target !== null && s(m.target))) })),
  listModels: 'neutral', testModel: 'neutral', checkCompatEndpoint: 'neutral', listCompatEndpoints: 'neutral', removeCompatEndpoint: 'neutral', renameCompatEndpoint: 'neutral', setUiPreference: 'neutral',
  // review, permissions, plans, branches
  listTurnChanges: 'thread', listFileHunks: 'thread', undoHunk: 'thread', undoFile: 'thread', keepFile: 'thread',
  getPermissions: 'thread', setPermissionMode: 'thread', removePermissionRule: 'thread', setWorkMode: 'thread',
  getPlan: 'thread', updatePlan: 'thread', setPlanStep: 'thread', actOnPlan: 'thread',
  getThreadTree: 'thread', switchBranch: 'thread', regenerate: 'thread', retry: 'thread', editMessage: 'thread', compareBranches: 'thread',
  // rules, history, bundles, compaction, importers, search, handoff
  listRules: 'neutral', getRule: 'neutral', createRule: 'neutral', updateRule: 'neutral', setRuleEnabled: 'neutral', previewRules: 'neutral', getSystemPrompt: 'thread',
  listPromptHistory: narrow((v: { prompts: Threaded[] }, s) => ({ prompts: byThread(v.prompts, s) })),
  exportBundle: 'refuse', importBundle: 'neutral', compactThread: 'thread', listCompactions: 'thread',
  scanExternalSessions: 'neutral', importExternalSessions: 'neutral', searchThreads: 'thread', previewHandoff: 'thread',
  // MCP
  listMcpServers: 'neutral', watchMcpServers: 'neutral', reloadMcpConfig: 'neutral', restartMcpServer: 'neutral', setMcpServerEnabled: 'neutral',
  setMcpToolEnabled: 'neutral', authenticateMcpServer: 'neutral', readMcpResource: 'neutral', getMcpPrompt: 'neutral', setMcpAppState: 'thread',
  // ledger: the machine's spending across workspaces is not a workspace's to read; prices name no thread
  getUsage: 'refuse', getThreadCosts: 'thread', grantBalance: 'refuse', setBudget: 'refuse', setPrice: 'refuse', getPrice: 'neutral',
};

type Pool = { variants: Array<{ threadId: string }> };
const poolsIn = <P extends Pool>(pools: readonly P[], s: InScope): P[] => pools.filter((p) => p.variants.length > 0 && p.variants.every((v) => s(v.threadId)));

/** The thread ids a command message names. */
function namedThreads(msg: Record<string, unknown>): string[] {
  const ids: string[] = [];
  for (const f of ['threadId', 'parentThreadId'] as const) if (typeof msg[f] === 'string') ids.push(msg[f]);
  if (Array.isArray(msg.mentions)) {
    for (const m of msg.mentions as Array<{ kind?: unknown; target?: unknown }>) if (m?.kind === 'thread' && typeof m.target === 'string') ids.push(m.target);
  }
  return ids;
}

/** The scope of a session: null when its grant reaches every thread. */
export class ThreadScope {
  private constructor(private readonly store: Pick<VoxStore, 'db' | 'workspace'>) {}

  static of(grant: Grant, store: Pick<VoxStore, 'db' | 'workspace'>): ThreadScope | null {
    return grant.threads === 'workspace' ? new ThreadScope(store) : null;
  }

  /** The workspace whose threads it reaches (a store without one: none). */
  get workspace(): string | null {
    return this.store.workspace;
  }

  readonly inScope: InScope = (threadId) => this.workspace !== null && threadWorkspace(this.store.db, threadId) === this.workspace;

  /**
   * Checks a command before its handler; returns how to narrow its answer. Throws `store/notFound`
   * (the message a missing thread gets) for a thread out of scope, `protocol/capabilityDenied` for
   * a command not open to a bound session.
   */
  check(type: CommandType, msg: Record<string, unknown>, holder: string): (value: unknown) => unknown {
    const rule = RULES[type];
    if (rule === 'refuse') {
      throw new ScopeError('capabilityDenied', `${holder} may not ${type}: its grant reaches only the threads of its workspace, and ${type} is not confined to them (a grant of all workspaces allows it)`);
    }
    if (rule !== 'neutral') {
      for (const id of namedThreads(msg)) if (!this.inScope(id)) throw new StoreError('notFound', `thread ${id} does not exist`);
    }
    return typeof rule === 'object' ? (v) => rule.narrow(v as never, this.inScope) : (v) => v;
  }

  /** Whether a pushed update may go to the session (one naming another workspace's thread may not); variants updates are narrowed. */
  update(u: EngineUpdate): EngineUpdate | null {
    const threadId = (u as { threadId?: unknown }).threadId;
    if (typeof threadId === 'string' && !this.inScope(threadId)) return null;
    if (u.type === 'variants') return { ...u, pools: poolsIn(u.pools, this.inScope) };
    return u;
  }
}
