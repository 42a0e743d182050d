/**
 * Context handoff in a turn (SPEC 5.1): collects the runs of the thread's active path from the
 * store (prompt, tool calls and results, checkpoints, answer), decides whether the new turn
 * needs a handoff — its model or provider differs from the run just before it — builds the
 * preamble (./build.ts), records `handoff.built` for the chat's note, and puts the preamble
 * before the turn's user message in the request (the stored message is unchanged).
 *
 * Counting: the real tokenizer of ./count.ts. When it cannot load, UTF-8 bytes stand in for
 * tokens — every o200k/cl100k token is at least one byte, so the cap still holds.
 */
import type { ChatMessage, ResolvedModel } from '../providers/types';
import type { MessageRow, RunRow, VoxStore } from '../store/store';
import type { HandoffSummary } from '../../protocol/handoff';
import { buildHandoff, DEFAULT_HANDOFF_STRATEGY, utf8Bytes, type HandoffResult, type HandoffStrategy, type HandoffTurn } from './build';
import { handoffCounter } from './count';
import { HandoffError } from './errors';

export interface HandoffTarget { threadId: string; runId: string; userMessageId: string; model: ResolvedModel }
export interface HandoffChoice { strategy: HandoffStrategy; manualContext?: string | undefined }

/** A chosen handoff as given, or `handoff/manualContextMissing` for manualContext without text. */
export function checkChoice<C extends HandoffChoice>(choice: C): C {
  if (choice.strategy === 'manualContext' && !choice.manualContext?.trim()) {
    throw new HandoffError('manualContextMissing', 'the manualContext strategy carries your text: give it (manualContext, or --context in the CLI)');
  }
  return choice;
}

interface PathRuns { path: MessageRow[]; index: Map<string, number>; runs: RunRow[] }

/** The runs of the active path before `leafId`'s run (rows only, no items: cheap), in path order. */
function pathRuns(store: VoxStore, threadId: string, leafId: string, excludeRunId: string | null): PathRuns {
  const path = store.activePath(threadId, leafId);
  const index = new Map(path.map((m, i) => [m.id, i]));
  const runs = store.runs(threadId).filter((r) => r.id !== excludeRunId && r.userMessageId !== null && r.userMessageId !== leafId && index.has(r.userMessageId));
  runs.sort((a, b) => index.get(a.userMessageId!)! - index.get(b.userMessageId!)! || a.ordinal - b.ordinal);
  return { path, index, runs };
}

/** The runs of the active path up to (not including) `leafId`'s run, oldest first, with their items and checkpoints, and the fork index. */
export function collectTurns(store: VoxStore, threadId: string, leafId: string, excludeRunId: string | null, rows = pathRuns(store, threadId, leafId, excludeRunId)): { turns: HandoffTurn[]; forkIndex: number | null } {
  const { path, index, runs } = rows;
  const answers = new Map(path.filter((m) => m.role === 'assistant' && m.runId !== null).map((m) => [m.runId!, m.content]));
  const checkpoints = store.checkpoints(threadId);
  const turns: HandoffTurn[] = runs.map((r) => ({
    runId: r.id, ordinal: r.ordinal, provider: r.provider, model: r.model,
    prompt: path[index.get(r.userMessageId!)!]!.content,
    answer: answers.get(r.id) ?? '',
    tools: store.items(r.id).filter((i) => i.kind === 'toolCall').map((i) => ({ name: i.toolName ?? '?', arguments: i.arguments, status: i.status, result: i.content })),
    checkpoints: checkpoints.filter((c) => c.runId === r.id).map((c) => ({ ordinal: c.ordinal, ref: c.ref, trigger: c.trigger, toolName: c.toolName, changedCount: c.changedCount })),
  }));
  // The fork: the deepest earlier message of the path with a sibling (a regenerate or an edit branched there).
  const siblings = new Map<string, number>();
  for (const m of store.messages(threadId)) siblings.set(m.parentId ?? '', (siblings.get(m.parentId ?? '') ?? 0) + 1);
  let fork = -1;
  for (let i = 0; i < path.length - 1; i++) if ((siblings.get(path[i]!.parentId ?? '') ?? 0) > 1) fork = i;
  if (fork < 0) return { turns, forkIndex: null };
  const first = runs.findIndex((r) => index.get(r.userMessageId!)! >= fork);
  return { turns, forkIndex: first < 0 ? turns.length : first };
}

/** True when the turn's model or provider differs from the run just before it on the path. */
export function modelChanged(runs: readonly Pick<HandoffTurn, 'provider' | 'model'>[], model: ResolvedModel): boolean {
  const last = runs[runs.length - 1];
  return last !== undefined && (last.provider !== model.provider.id || last.model !== model.label);
}

async function counter(model: ResolvedModel): Promise<(s: string) => number> {
  return handoffCounter(model.model).catch(() => utf8Bytes);
}

/** Builds the handoff of a turn with a strategy (null: it covers no run). */
export async function handoffFor(store: VoxStore, t: HandoffTarget, choice: HandoffChoice = { strategy: DEFAULT_HANDOFF_STRATEGY }, collected = collectTurns(store, t.threadId, t.userMessageId, t.runId)): Promise<HandoffResult | null> {
  const { turns, forkIndex } = collected;
  return buildHandoff({
    strategy: choice.strategy, turns, forkIndex, target: { provider: t.model.provider.id, model: t.model.label },
    ...(choice.manualContext !== undefined ? { manualContext: choice.manualContext } : {}),
    countTokens: await counter(t.model),
  });
}

export function summaryOf(r: HandoffResult): HandoffSummary {
  return {
    strategy: r.strategy, sourceModel: r.sourceModel, coveredFrom: r.coveredRuns.from, coveredTo: r.coveredRuns.to,
    turnsVerbatim: r.carried.turnsVerbatim, turnsCompacted: r.carried.turnsCompacted, turnsOmitted: r.omitted.turns,
    checkpoints: r.carried.checkpoints, manualChars: r.carried.manualChars, manualCharsOmitted: r.omitted.manualChars, tokens: r.tokens, bytes: r.bytes,
  };
}

/**
 * The runner's call: when the model changed, the preamble goes before the last user message of
 * `history` and `handoff.built` is recorded (`record: false` for a resumed run, which has it).
 */
export async function applyHandoff(store: VoxStore, t: HandoffTarget, history: ChatMessage[], opts: { record: boolean; choice?: HandoffChoice }): Promise<HandoffResult | null> {
  // The run rows decide; the items of every run are read only when a handoff is built.
  const rows = pathRuns(store, t.threadId, t.userMessageId, t.runId);
  if (!opts.choice && !modelChanged(rows.runs, t.model)) return null;
  const built = await handoffFor(store, t, opts.choice, collectTurns(store, t.threadId, t.userMessageId, t.runId, rows));
  if (!built) return null;
  const i = history.map((m) => m.role).lastIndexOf('user');
  if (i >= 0) history[i] = { ...history[i]!, content: `${built.preamble}\n\n${history[i]!.content}` } as ChatMessage;
  if (opts.record) store.append({ type: 'handoff.built', threadId: t.threadId, runId: t.runId, ...summaryOf(built) });
  return built;
}
