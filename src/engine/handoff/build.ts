/**
 * Context handoff (SPEC 5.1): the pure builder of the `<context_handoff>` preamble a turn gets
 * when it runs on another model or provider than the run before it (./apply.ts decides that and
 * collects the turns from the store; this module only selects, renders and bounds them).
 *
 * A turn is one run of the thread's active path: the user's prompt, the tool calls with their
 * results, the checkpoints taken, the final answer. The history replay (../agent/history.ts)
 * gives a model the prompts and answers only; the handoff adds what happened in between, which
 * the new model never saw, and the turns that fell out of the replayed window.
 *
 * The strategies (each: which runs it covers, and how it renders them):
 *   - `deltaSinceTargetLastSeen` (the default, and what a model switch builds automatically):
 *     the runs after the last run the target model (same provider and model) made in this
 *     thread; every run when it never ran here. Recent turns verbatim, older ones compacted.
 *   - `forkDeltaSummary`: the runs of the active branch since its fork point (the deepest
 *     message of the path with a sibling: a regenerate or an edit); every run without a fork.
 *     Every turn compacted: a summary of what this branch did differently.
 *   - `fullThreadSummary`: every run of the active path, whoever made it. Recent turns
 *     verbatim, older ones compacted.
 *   - `checkpointSummary`: the runs of `deltaSinceTargetLastSeen`, each compacted and followed
 *     by the checkpoints it took (ordinal, trigger, tool, files changed, ref): the file states
 *     the new model can restore or compare, in place of the turns' detail.
 *   - `manualContext`: text the user gives, carried as written (cut at a character boundary
 *     when over the caps), standing in for every run of the active path (the user chose it, so
 *     it applies on the same model too).
 *
 * Bounds: the whole preamble stays within the token cap (a real tokenizer: the caller passes
 * `countTokens`, ./count.ts) and HANDOFF_BYTE_CAP UTF-8 bytes. Newest first, up to RECENT_VERBATIM_TURNS
 * turns go verbatim while they fit VERBATIM_SHARE of the caps (tool arguments and results cut
 * to VERBATIM_TOOL_CHARS); older turns are compacted to COMPACTED_TURN_CHARS characters each
 * while they fit; the oldest that do not are left out, and the result says how many. Cuts are
 * by code point (never inside a surrogate pair; UTF-8 bytes are whole characters).
 */

import { HANDOFF_STRATEGIES, type HandoffStrategy } from '../../protocol/handoff';

export { HANDOFF_STRATEGIES, type HandoffStrategy };
export const DEFAULT_HANDOFF_STRATEGY: HandoffStrategy = 'deltaSinceTargetLastSeen';
/** Most tokens of a preamble (SPEC 5.1). */
export const DEFAULT_HANDOFF_TOKEN_CAP = 16_000;
/** Most UTF-8 bytes of a preamble (SPEC 5.1). */
export const HANDOFF_BYTE_CAP = 64_000;
/** Characters (code points) of a compacted turn's line (SPEC 5.1). */
export const COMPACTED_TURN_CHARS = 240;
/** Most recent turns carried verbatim. */
export const RECENT_VERBATIM_TURNS = 3;
/** Share of the caps the verbatim turns may take (the rest is for compacted older turns). */
export const VERBATIM_SHARE = 0.75;
/** Code points of one tool call's arguments, and of its result, in a verbatim turn. */
export const VERBATIM_TOOL_CHARS = 600;

export interface HandoffToolCall { name: string; arguments: string | null; status: string; result: string }
export interface HandoffCheckpoint { ordinal: number; ref: string; trigger: string; toolName: string | null; changedCount: number }
export interface HandoffTurn {
  runId: string;
  /** The run's ordinal in its thread (covered_runs names these). */
  ordinal: number;
  provider: string;
  /** The model's label (`provider:model`), as runs record it. */
  model: string;
  prompt: string;
  answer: string;
  tools: HandoffToolCall[];
  checkpoints: HandoffCheckpoint[];
}

export interface HandoffInput {
  strategy: HandoffStrategy;
  /** The runs of the active path before the new turn, oldest first. */
  turns: HandoffTurn[];
  /** The model of the new turn. */
  target: { provider: string; model: string };
  /** Index in `turns` of the first run after the active branch's fork point (null: no fork). */
  forkIndex: number | null;
  /** The user's text, for `manualContext`. */
  manualContext?: string;
  /** Tokens of a text with a real tokenizer. */
  countTokens: (text: string) => number;
  tokenCap?: number;
  byteCap?: number;
}

export interface HandoffResult {
  preamble: string;
  strategy: HandoffStrategy;
  /** The model of the last covered run. */
  sourceModel: string;
  coveredRuns: { from: number; to: number };
  carried: { runs: string[]; turnsVerbatim: number; turnsCompacted: number; checkpoints: number; manualChars: number };
  omitted: { runs: string[]; turns: number; manualChars: number };
  tokens: number;
  bytes: number;
}

/** The runs a strategy covers (indexes into `turns`), before any bound. */
export function coveredRange(input: Pick<HandoffInput, 'strategy' | 'turns' | 'target' | 'forkIndex'>): { start: number; end: number } {
  const { turns, target } = input;
  const end = turns.length;
  if (input.strategy === 'fullThreadSummary' || input.strategy === 'manualContext') return { start: 0, end };
  if (input.strategy === 'forkDeltaSummary') return { start: input.forkIndex ?? 0, end };
  let lastSeen = -1;
  turns.forEach((t, i) => {
    if (t.provider === target.provider && t.model === target.model) lastSeen = i;
  });
  return { start: lastSeen + 1, end };
}

/** The preamble of a strategy, or null when it covers no run. */
export function buildHandoff(input: HandoffInput): HandoffResult | null {
  const { start, end } = coveredRange(input);
  if (start >= end) return null;
  const covered = input.turns.slice(start, end);
  const tokenCap = input.tokenCap ?? DEFAULT_HANDOFF_TOKEN_CAP;
  const byteCap = input.byteCap ?? HANDOFF_BYTE_CAP;
  const last = covered[covered.length - 1]!;
  const open = `<context_handoff covered_runs="${covered[0]!.ordinal}..${last.ordinal}" source_model="${attr(last.model)}" strategy="${input.strategy}">`;
  const intro = `This thread was handled by ${modelsOf(covered)} before you (${input.target.model}). What happened in runs ${covered[0]!.ordinal} to ${last.ordinal}, oldest first:`;
  const close = '</context_handoff>';
  const frame = (body: string[]) => [open, intro, ...body, close].join('\n');
  // Bytes first: a text over the byte cap is never tokenized.
  const fits = (text: string, share = 1) => utf8Bytes(text) <= byteCap * share && input.countTokens(text) <= tokenCap * share;
  const result = (body: string[], carried: HandoffResult['carried'], omitted: HandoffResult['omitted']): HandoffResult => {
    const preamble = frame(body);
    return { preamble, strategy: input.strategy, sourceModel: last.model, coveredRuns: { from: covered[0]!.ordinal, to: last.ordinal }, carried, omitted, tokens: input.countTokens(preamble), bytes: utf8Bytes(preamble) };
  };

  if (input.strategy === 'manualContext') {
    const text = escapeBody(input.manualContext ?? '');
    const cps = Array.from(text);
    // The longest prefix that fits (binary search on code points).
    let lo = 0;
    let hi = cps.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(frame([cps.slice(0, mid).join('')]))) lo = mid;
      else hi = mid - 1;
    }
    return result([cps.slice(0, lo).join('')], { runs: covered.map((t) => t.runId), turnsVerbatim: 0, turnsCompacted: 0, checkpoints: 0, manualChars: lo }, { runs: [], turns: 0, manualChars: cps.length - lo });
  }

  const compactOnly = input.strategy === 'forkDeltaSummary' || input.strategy === 'checkpointSummary';
  const withCheckpoints = input.strategy === 'checkpointSummary';
  // Sizes add up part by part (each counted with its line break); the whole is checked at the end.
  // A text over the byte cap is never tokenized (Infinity tokens).
  const size = (text: string) => {
    const bytes = utf8Bytes(text) + 1;
    return { bytes, tokens: bytes > byteCap ? Infinity : input.countTokens(`${text}\n`) };
  };
  let used = size(frame([omittedNote(covered.length)]));
  const within = (add: { tokens: number; bytes: number }, share: number) =>
    used.bytes + add.bytes <= byteCap * share && used.tokens + add.tokens <= tokenCap * share;
  // Newest first: verbatim while allowed and within the verbatim share, then compacted while the whole fits.
  const blocks: { index: number; text: string; verbatim: boolean; checkpoints: number }[] = [];
  for (let i = covered.length - 1; i >= 0; i--) {
    const turn = covered[i]!;
    const allVerbatim = blocks.every((b) => b.verbatim);
    if (!compactOnly && allVerbatim && blocks.length < RECENT_VERBATIM_TURNS) {
      const text = renderVerbatim(turn);
      const add = size(text);
      if (within(add, VERBATIM_SHARE)) {
        blocks.push({ index: i, text, verbatim: true, checkpoints: 0 });
        used = { tokens: used.tokens + add.tokens, bytes: used.bytes + add.bytes };
        continue;
      }
    }
    const text = compactTurn(turn) + (withCheckpoints ? renderCheckpoints(turn) : '');
    const add = size(text);
    if (!within(add, 1)) break;
    blocks.push({ index: i, text, verbatim: false, checkpoints: withCheckpoints ? turn.checkpoints.length : 0 });
    used = { tokens: used.tokens + add.tokens, bytes: used.bytes + add.bytes };
  }
  const assemble = () => {
    const kept = [...blocks].reverse();
    const omittedTurns = covered.slice(0, covered.length - blocks.length);
    const body = [...(omittedTurns.length > 0 ? [omittedNote(omittedTurns.length)] : []), ...kept.map((b) => b.text)];
    return { kept, omittedTurns, body };
  };
  let parts = assemble();
  // Tokenizers do not add exactly across line breaks: the oldest kept turns go until the whole fits.
  while (blocks.length > 0 && !fits(frame(parts.body))) {
    blocks.pop();
    parts = assemble();
  }
  const verbatim = blocks.filter((b) => b.verbatim).length;
  return result(
    parts.body,
    {
      runs: parts.kept.map((b) => covered[b.index]!.runId), turnsVerbatim: verbatim, turnsCompacted: blocks.length - verbatim,
      checkpoints: blocks.reduce((n, b) => n + b.checkpoints, 0), manualChars: 0,
    },
    { runs: parts.omittedTurns.map((t) => t.runId), turns: parts.omittedTurns.length, manualChars: 0 },
  );
}

function omittedNote(n: number): string {
  return `[${n} earlier run${n === 1 ? '' : 's'} left out to fit the handoff's size]`;
}

/** A turn as it was: prompt, tool calls (arguments and results cut), answer. */
function renderVerbatim(t: HandoffTurn): string {
  const lines = [`<turn run="${t.ordinal}" model="${attr(t.model)}">`, `<user>${escapeBody(t.prompt)}</user>`];
  for (const c of t.tools) {
    lines.push(`<tool name="${attr(c.name)}" status="${attr(c.status)}">`);
    if (c.arguments) lines.push(`<arguments>${escapeBody(cut(c.arguments, VERBATIM_TOOL_CHARS))}</arguments>`);
    lines.push(`<result>${escapeBody(cut(c.result, VERBATIM_TOOL_CHARS))}</result>`, '</tool>');
  }
  lines.push(`<assistant>${escapeBody(t.answer)}</assistant>`, '</turn>');
  return lines.join('\n');
}

/** A turn in one line of at most COMPACTED_TURN_CHARS code points: who, the prompt, the tools used, the answer. */
export function compactTurn(t: HandoffTurn): string {
  const tools = t.tools.length > 0 ? ` | tools: ${[...new Set(t.tools.map((c) => c.name))].join(', ')}` : '';
  const line = `- run ${t.ordinal} (${t.model}) user: ${oneLine(t.prompt)}${tools} | answer: ${oneLine(t.answer)}`;
  return cut(escapeBody(line), COMPACTED_TURN_CHARS);
}

function renderCheckpoints(t: HandoffTurn): string {
  return t.checkpoints.map((c) => `\n  checkpoint ${c.ordinal} (${c.trigger}${c.toolName ? ` after ${c.toolName}` : ''}, ${c.changedCount} file${c.changedCount === 1 ? '' : 's'} changed): ${c.ref}`).join('');
}

function modelsOf(turns: HandoffTurn[]): string {
  return [...new Set(turns.map((t) => t.model))].join(', ');
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The first `max` code points of `s`, with an ellipsis when cut (the result has at most `max`). */
export function cut(s: string, max: number): string {
  const cps = Array.from(s);
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** Content may not close the preamble early. */
function escapeBody(s: string): string {
  return s.replace(/<\/context_handoff/gi, '&lt;/context_handoff');
}
