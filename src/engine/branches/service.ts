/**
 * The conversation tree in the engine (SPEC 5.4, 6.3): the whole tree
 * of a thread with its branches, switching branch (the head moves to the latest leaf under a
 * message, refused while the thread runs — checked in the same IMMEDIATE transaction that moves
 * it, so it holds across processes), regenerate / retry (the prompt re-sent as a new sibling
 * user message, with the original run's posture or another model), edits (assistant: in place;
 * user: a new branch) and the data of a side-by-side compare. The tree logic itself is the
 * protocol's pure ../../protocol/branches.ts; this module reads the store and starts runs.
 */
import {
  BranchError, MAX_COMPARED_BRANCHES, MIN_COMPARED_BRANCHES, branchesOf, buildTree, computeDivergencePoint, latestLeafUnder, pathTo,
} from '../../protocol/branches';
import { branchNames } from '../../protocol/branch-names';
import { MAX_TREE_MESSAGES, type BranchView } from '../../protocol/commands/branches';
import { splitContext } from '../../protocol/mentions';
import type { SamplingSettings } from '../../protocol/posture';
import { RunError } from '../runs/errors';
import { isLiveRun, storedPosture } from '../runs/registry';
import { startTurn, type TurnStartPorts } from '../runs/start-turn';
import { unprepared, type PreparedTurn } from '../runs/turn-start';
import type { MessageRow, RunRow, VoxStore } from '../store/store';
import { countMessages, lastRunOfMessage, messageById, runEndedStopReason } from './reads';
import { unifiedDiff } from './unified-diff';

/** What reruns start turns through (../runs/start-turn.ts): the store, runs and models; a session's grant and the thread modes checked against it. */
export interface BranchDeps extends Pick<TurnStartPorts, 'store' | 'runs' | 'resolveModel' | 'defaultModel' | 'grant' | 'modesOf'> {
  /**
   * Rules (../rules/): the block of the rules a posture recorded (a regenerate re-attaches them),
   * and the preparer of an edited prompt (its @rule tokens stripped, its rules attached).
   */
  rules?: {
    blockFor(threadId: string, names: readonly string[]): Promise<{ names: string[]; block: string }>;
    storedPreparer(threadId: string): Promise<(stored: string) => { prompt: string; names: string[]; block: string }>;
  };
}

export interface RerunStarted { threadId: string; runId: string; userMessageId: string }

/** Run statuses a retry takes (a completed run only when it stopped at the output limit). */
const RETRYABLE = new Set(['failed', 'cancelled', 'interrupted']);

/** A message of `threadId`, or a typed error (unknown, or another thread's). */
export function messageOf(store: VoxStore, threadId: string, messageId: string): MessageRow {
  const m = messageById(store.db, messageId);
  if (!m) throw new BranchError('unknownMessage', `message ${messageId} does not exist`, { threadId, messageId });
  if (m.threadId !== threadId) throw new BranchError('wrongThread', `message ${messageId} belongs to another thread, not ${threadId}`, { threadId, messageId });
  return m;
}

function runOf(store: VoxStore, threadId: string, runId: string): RunRow {
  const r = store.run(runId);
  if (!r) throw new RunError('unknownRun', `run ${runId} does not exist`, { runId, threadId });
  if (r.threadId !== threadId) throw new BranchError('wrongThread', `run ${runId} belongs to another thread, not ${threadId}`, { threadId, runId });
  return r;
}

/** A message's prompt (its text without attached context) when it is the user's, for branch names. */
const promptText = (m: MessageRow): string | null => (m.role === 'user' ? splitContext(m.content).prompt : null);

function checkSize(store: VoxStore, threadId: string): void {
  const n = countMessages(store.db, threadId);
  if (n > MAX_TREE_MESSAGES) {
    throw new BranchError('tooLarge', `thread ${threadId} has ${n} messages; the conversation tree is limited to ${MAX_TREE_MESSAGES}`, { threadId, count: n, max: MAX_TREE_MESSAGES });
  }
}

function busy(r: RunRow): RunError {
  return new RunError('threadBusy', `this thread is running a turn (${r.model}); wait for it to finish or stop it first`, { runId: r.id, threadId: r.threadId });
}

/** Every message of the thread, its branches and head (`getThreadTree`). */
export function threadTree(store: VoxStore, threadId: string): { threadId: string; headMessageId: string | null; messages: MessageRow[]; branches: BranchView[] } {
  store.getThread(threadId);
  checkSize(store, threadId);
  const messages = store.messages(threadId);
  const headMessageId = store.headMessageId(threadId);
  const tree = buildTree(messages);
  const infos = branchesOf(tree);
  const names = branchNames(tree, infos, promptText);
  const branches = infos.map((b) => ({ ...b, name: names.get(b.branchId)!, active: b.leafId === headMessageId }));
  return { threadId, headMessageId, messages, branches };
}

/** Moves the head to the latest leaf under `toMessageId`; refused while the thread runs (checked in the transaction). */
export function switchBranch(store: VoxStore, threadId: string, toMessageId: string): { headMessageId: string } {
  store.getThread(threadId);
  messageOf(store, threadId, toMessageId);
  checkSize(store, threadId);
  // The transaction answers rather than throws (the store wraps what a transaction throws as its own failure).
  const outcome = store.transact((append): { busy: RunRow } | { leaf: string } => {
    const live = store.running(threadId).find((r) => isLiveRun(r));
    if (live) return { busy: live };
    // Read inside the transaction: a regenerate in another process may just have added a leaf.
    const leaf = latestLeafUnder(buildTree(store.messages(threadId)), toMessageId);
    append({ type: 'thread.branchSwitched', threadId, toMessageId: leaf });
    return { leaf };
  });
  if ('busy' in outcome) throw busy(outcome.busy);
  return { headMessageId: outcome.leaf };
}

/** The nearest user message at or above `m` (the prompt an answer replied to). */
function promptAbove(store: VoxStore, threadId: string, m: MessageRow | undefined): MessageRow | undefined {
  for (let cur = m, guard = 0; cur && guard <= MAX_TREE_MESSAGES; guard++) {
    if (cur.role === 'user') return cur;
    cur = cur.parentId ? messageById(store.db, cur.parentId) : undefined;
    if (cur && cur.threadId !== threadId) return undefined;
  }
  return undefined;
}

/** Re-sends user message `u` as a new sibling (same parent), with its run's posture or `model`; `what` names the command for a refusal. */
async function rerun(deps: BranchDeps, what: string, threadId: string, u: MessageRow, run: RunRow | undefined, model: string | undefined, content = u.content): Promise<RerunStarted> {
  const original = run ?? lastRunOfMessage(deps.store.db, u.id);
  const posture = original ? storedPosture(original) : undefined;
  const sampling: SamplingSettings | undefined = posture ? { temperature: posture.temperature, topP: posture.topP, reasoningEffort: posture.reasoningEffort } : undefined;
  const { store, runs, resolveModel, defaultModel, grant, modesOf } = deps;
  const out = await startTurn({ store, runs, resolveModel, defaultModel, ...(grant ? { grant } : {}), ...(modesOf ? { modesOf } : {}) }, {
    threadId, prompt: content, model: model ?? posture?.model ?? original?.model ?? defaultModel(), parentMessageId: u.parentId,
    // A rerun answers an earlier message: it never waits in the queue.
    ifBusy: 'refuse', what: `${what} in thread ${threadId}`,
    ...(sampling ? { run: { sampling } } : {}),
    // The same prompt re-attaches the rules its posture recorded; an edited one gets its own.
    prepare: async (): Promise<PreparedTurn> => {
      if (deps.rules && content !== u.content) {
        const p = (await deps.rules.storedPreparer(threadId))(content);
        return { ...unprepared(p.prompt), queuedPrompt: content, rules: p.names, rulesBlock: p.block };
      }
      if (deps.rules && posture && posture.rules.length > 0) {
        const b = await deps.rules.blockFor(threadId, posture.rules);
        return { ...unprepared(content), rules: b.names, rulesBlock: b.block };
      }
      return { ...unprepared(content), rules: posture?.rules ?? [] };
    },
  });
  if (out.kind !== 'started') throw new Error(`a rerun was ${out.kind}, not started`); // ifBusy 'refuse': a busy thread refuses
  return { threadId: out.handle.threadId, runId: out.handle.runId, userMessageId: out.handle.userMessageId };
}

/** `regenerate`: the prompt answered by a message / run (or the head's) re-sent as a sibling. */
export async function regenerate(deps: BranchDeps, cmd: { threadId: string; messageId?: string; runId?: string; model?: string }): Promise<RerunStarted> {
  const { store } = deps;
  store.getThread(cmd.threadId);
  if (cmd.messageId !== undefined && cmd.runId !== undefined) throw new BranchError('badTarget', 'regenerate takes a message or a run, not both', { threadId: cmd.threadId });
  let u: MessageRow | undefined;
  let run: RunRow | undefined;
  if (cmd.runId !== undefined) {
    run = runOf(store, cmd.threadId, cmd.runId);
    u = run.userMessageId ? messageById(store.db, run.userMessageId) : undefined;
  } else if (cmd.messageId !== undefined) {
    const m = messageOf(store, cmd.threadId, cmd.messageId);
    if (m.role === 'system') throw new BranchError('badTarget', `message ${m.id} is a system message; regenerate takes a user or assistant message`, { threadId: cmd.threadId, messageId: m.id });
    u = promptAbove(store, cmd.threadId, m);
  } else {
    const head = store.headMessageId(cmd.threadId);
    u = promptAbove(store, cmd.threadId, head ? messageById(store.db, head) : undefined);
  }
  if (!u) throw new BranchError('nothingToRegenerate', 'there is no prompt to regenerate here', { threadId: cmd.threadId });
  return rerun(deps, 'regenerate', cmd.threadId, u, run, cmd.model);
}

/** `retry`: regenerate for a run that did not finish (failed, cancelled, interrupted, or cut at the output limit). */
export async function retry(deps: BranchDeps, cmd: { threadId: string; runId: string; model?: string }): Promise<RerunStarted> {
  const { store } = deps;
  store.getThread(cmd.threadId);
  const run = runOf(store, cmd.threadId, cmd.runId);
  if (run.status === 'running' && isLiveRun(run)) throw busy(run);
  const cut = run.status === 'completed' && runEndedStopReason(store.db, run.threadId, run.id) === 'length';
  if (!RETRYABLE.has(run.status) && !cut && run.status !== 'running') {
    throw new BranchError('notRetryable', `run ${run.id} completed; use regenerate for another answer`, { threadId: cmd.threadId, runId: run.id });
  }
  const u = run.userMessageId ? messageById(store.db, run.userMessageId) : undefined;
  if (!u) throw new BranchError('nothingToRegenerate', `run ${run.id} has no prompt to retry`, { threadId: cmd.threadId, runId: run.id });
  return rerun(deps, 'retry', cmd.threadId, u, run, cmd.model);
}

/**
 * `editMessage`: an assistant message is edited in place (`message.edited`; the original stays
 * as its `message.added` in the log); a user message becomes a new branch — the new text (with
 * the original's attached context, unless the new text carries its own) run as a sibling.
 */
export async function editMessage(
  deps: BranchDeps, cmd: { threadId: string; messageId: string; content: string; model?: string },
): Promise<{ messageId: string; edited: boolean; runId: string | null }> {
  const { store } = deps;
  store.getThread(cmd.threadId);
  if (cmd.content.trim().length === 0) throw new BranchError('emptyContent', 'the edited message is empty', { threadId: cmd.threadId, messageId: cmd.messageId });
  const m = messageOf(store, cmd.threadId, cmd.messageId);
  if (m.role === 'assistant') {
    store.append({ type: 'message.edited', threadId: cmd.threadId, messageId: m.id, content: cmd.content });
    return { messageId: m.id, edited: true, runId: null };
  }
  if (m.role !== 'user') throw new BranchError('badTarget', `message ${m.id} is a ${m.role} message; only user and assistant messages can be edited`, { threadId: cmd.threadId, messageId: m.id });
  const { prompt, chips } = splitContext(m.content);
  const keptContext = chips.length > 0 && splitContext(cmd.content).chips.length === 0 ? m.content.slice(prompt.length) : '';
  const r = await rerun(deps, 'editMessage', cmd.threadId, m, undefined, cmd.model, cmd.content + keptContext);
  return { messageId: r.userMessageId, edited: false, runId: r.runId };
}

/** The last assistant answer on a path ('' when it has none). */
function finalAnswer(path: readonly MessageRow[]): string {
  for (let i = path.length - 1; i >= 0; i--) if (path[i]!.role === 'assistant') return path[i]!.content;
  return '';
}

/** `compareBranches`: the shared messages, each branch after the divergence point, and diffs of the final answers. */
export function compareBranches(store: VoxStore, threadId: string, leafIds: readonly string[]) {
  store.getThread(threadId);
  if (leafIds.length < MIN_COMPARED_BRANCHES || leafIds.length > MAX_COMPARED_BRANCHES) {
    throw new BranchError('badLeaves', `compare takes ${MIN_COMPARED_BRANCHES} to ${MAX_COMPARED_BRANCHES} branches, not ${leafIds.length}`, { threadId, count: leafIds.length, max: MAX_COMPARED_BRANCHES });
  }
  if (new Set(leafIds).size !== leafIds.length) throw new BranchError('badLeaves', 'compare takes distinct branches (a leaf was given twice)', { threadId });
  for (const id of leafIds) messageOf(store, threadId, id);
  checkSize(store, threadId);
  const tree = buildTree(store.messages(threadId));
  const infos = branchesOf(tree);
  const names = branchNames(tree, infos, promptText);
  const branchOf = new Map(infos.map((b) => [b.leafId, b.branchId]));
  for (const id of leafIds) {
    if (!branchOf.has(id)) throw new BranchError('badLeaves', `message ${id} is not the leaf of a branch (it has later messages)`, { threadId, messageId: id });
  }
  const paths = leafIds.map((id) => pathTo(tree, id));
  const divergence = computeDivergencePoint(paths.map((p) => p.map((m) => m.id)));
  const columns = leafIds.map((leafId, i) => ({ leafId, branchId: branchOf.get(leafId)!, name: names.get(branchOf.get(leafId)!)!, messages: paths[i]!.slice(divergence.index) }));
  const first = finalAnswer(paths[0]!);
  const finalDiffs = leafIds.slice(1).map((leafId, i) => ({
    leafId, against: leafIds[0]!,
    diff: unifiedDiff(first, finalAnswer(paths[i + 1]!), { before: names.get(branchOf.get(leafIds[0]!)!)!, after: names.get(branchOf.get(leafId)!)! }),
  }));
  return { divergence, shared: paths[0]!.slice(0, divergence.index), columns, finalDiffs };
}
