/**
 * Automatic compaction (SPEC 3.7; the runner's `compactBeforeCall`): before each model call the
 * request is counted the way the context meter counts it (../providers/token-count.ts against
 * ../providers/context-windows.ts); when it would fill more than `AUTO_COMPACT_TRIGGER_FILL` of
 * the model's window, the thread's older messages are compacted (`upTo`, trigger `auto`) so the
 * request lands near `AUTO_COMPACT_TARGET_FILL`, keeping the last turns verbatim, and the
 * request's history is rewritten in place: the system prompt, this turn's prompt and everything
 * the turn did so far (tool calls with their provider signatures) stay exactly as they were.
 * The chat is told with a status chunk while it runs and the `thread.compacted` note after.
 * A failed compaction is reported in the status line and the call goes ahead uncompacted; the
 * turn does not try again.
 */
import { buildHistory } from '../conversation/history';
import type { TurnSpec } from '../agent/runner';
import { compactPath } from '../../protocol/compaction';
import { contextWindowOf } from '../providers/context-windows';
import { countPrompt, countSourceOf, countText, OPENAI_TOKENS_PER_MESSAGE } from '../providers/token-count';
import type { ChatMessage, ToolSpec } from '../providers/types';
import type { VoxStore } from '../store/store';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import { compactThread, type CompactionDeps } from './service';

/** A request above this share of the window is compacted before it is sent. */
export const AUTO_COMPACT_TRIGGER_FILL = 0.9;
/** The share of the window the compacted request aims for. */
export const AUTO_COMPACT_TARGET_FILL = 0.5;
/** Tokens set aside for the summary when choosing how much to compact (at most this share of the window). */
export const AUTO_COMPACT_SUMMARY_RESERVE_TOKENS = 2_000;
export const AUTO_COMPACT_SUMMARY_RESERVE_FILL = 0.15;

export interface AutoCompactionDeps extends CompactionDeps {
  streams: TurnStreamRegistry;
  /** A compaction that failed (the call goes ahead uncompacted). */
  onError?(e: unknown, threadId: string): void;
}

/** Tokens a message may cost beyond its text (role, separators) in the bound below; above every provider's framing. */
export const FRAMING_TOKENS_BOUND = 8;

/**
 * At least as many tokens as the request can have, without a tokenizer: byte-level BPE
 * tokenizers (OpenAI's, Anthropic's, Llama 3's, Qwen's) never make more tokens than UTF-8 bytes.
 */
export function tokenUpperBound(messages: readonly ChatMessage[], specs: readonly ToolSpec[]): number {
  let n = FRAMING_TOKENS_BOUND + (specs.length > 0 ? Buffer.byteLength(JSON.stringify(specs)) : 0);
  for (const m of messages) {
    n += FRAMING_TOKENS_BOUND + Buffer.byteLength(m.content);
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) n += Buffer.byteLength(c.name) + Buffer.byteLength(c.argumentsJson) + FRAMING_TOKENS_BOUND;
  }
  return n;
}

/** The history part of a request built by the runner: `messages[1 … end)` (after the system prompt, before this turn's messages). */
function historyEnd(store: VoxStore, t: TurnSpec, system: string): number {
  return buildHistory(store.activePath(t.threadId, t.userMessageId), system, (r) => store.steers(r), store.compactions(t.threadId)).length - 1;
}

/** Rewrites messages[1 … end) with the thread's history as it is now (after a compaction). */
function rewriteHistory(store: VoxStore, t: TurnSpec, messages: ChatMessage[], end: number): void {
  const system = messages[0]!.content;
  const fresh = buildHistory(store.activePath(t.threadId, t.userMessageId), system, (r) => store.steers(r), store.compactions(t.threadId));
  messages.splice(1, end - 1, ...fresh.slice(1, -1));
}

/** The runner's `compactBeforeCall`: see the file header. */
export function autoCompactor(deps: AutoCompactionDeps): (t: TurnSpec, messages: ChatMessage[], specs: ToolSpec[]) => Promise<void> {
  const { store, streams } = deps;
  // A turn whose automatic compaction failed is not compacted again (one failed summary call per turn, not one per model call).
  const failed = new WeakSet<TurnSpec>();
  return async (t, messages, specs) => {
    if (failed.has(t)) return;
    const window = (await contextWindowOf(t.model)).tokens;
    if (window === null || messages.length === 0) return;
    // No count (for Anthropic and VS Code models a request to the provider) while the request cannot be near the window.
    if (tokenUpperBound(messages, specs) <= window * AUTO_COMPACT_TRIGGER_FILL) return;
    const total = (await countPrompt(t.model, messages, specs)).tokens;
    if (total <= window * AUTO_COMPACT_TRIGGER_FILL) return;
    const system = messages[0]!.content;
    const end = historyEnd(store, t, system);
    const path = store.activePath(t.threadId, t.userMessageId);
    const prior = path.slice(0, -1); // this turn's prompt stays verbatim
    if (prior.length === 0 || end <= 1) return;
    // What stays whatever happens: system prompt, this turn's prompt and work, tools.
    const fixed = (await countPrompt(t.model, [messages[0]!, ...messages.slice(end)], specs)).tokens;
    const reserve = Math.min(AUTO_COMPACT_SUMMARY_RESERVE_TOKENS, Math.floor(window * AUTO_COMPACT_SUMMARY_RESERVE_FILL));
    const budget = window * AUTO_COMPACT_TARGET_FILL - fixed - reserve;
    const upTo = await boundary(t, prior, store, budget);
    streams.append(t.runId, 'status', `Compacting the conversation: this request (${total} tokens) would not fit ${t.model.label}'s window of ${window} tokens…`);
    try {
      await compactThread(deps, { threadId: t.threadId, mode: 'upTo', messageId: prior[upTo]!.id, trigger: 'auto', runId: t.runId, model: t.model, signal: t.signal });
      rewriteHistory(store, t, messages, end);
      streams.append(t.runId, 'status', '');
    } catch (e) {
      if (t.signal.aborted) throw e;
      failed.add(t);
      streams.append(t.runId, 'status', `Automatic compaction failed: ${(e as Error).message}`);
      deps.onError?.(e, t.threadId);
    }
  };
}

/**
 * The index of the last prior message to compact: the fewest (keeping the most verbatim) whose
 * kept remainder fits `budget`; the kept part starts at a user message (a whole turn). All of
 * them when nothing smaller fits.
 */
async function boundary(t: TurnSpec, prior: ReturnType<VoxStore['activePath']>, store: VoxStore, budget: number): Promise<number> {
  const source = countSourceOf(t.model);
  const units = compactPath(prior, store.compactions(t.threadId));
  // Tokens of each prior message as history sends it (a summary unit counts for the messages it stands for).
  const cost = new Map<string, number>();
  for (const u of units) {
    if (u.kind === 'message') cost.set(u.message.id, (await countText(source, u.message.content)) + OPENAI_TOKENS_PER_MESSAGE);
  }
  let kept = 0;
  let best = prior.length - 1;
  for (let k = prior.length - 1; k >= 1; k--) {
    kept += cost.get(prior[k]!.id) ?? 0;
    if (kept > budget) break;
    if (prior[k]!.role === 'user') best = k - 1; // keep prior[k …] verbatim, compact prior[0 … k-1]
  }
  return best;
}
