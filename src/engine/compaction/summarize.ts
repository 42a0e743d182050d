/**
 * The model call of a compaction: the covered messages as a transcript (earlier summaries inside
 * the range stand for their messages), an instruction asking for the fixed markdown shape of
 * ../../protocol/compaction.ts (Goal, Decisions, Files touched, Open items), sent through the
 * thread's model and its normal provider without tools; the answer is validated — an answer of
 * any other shape is a `compaction/invalidSummary` error and nothing is written.
 */
import { SUMMARY_SECTIONS, normaliseSummary, summaryProblem, type PathUnit } from '../../protocol/compaction';
import { approximateTokens } from '../providers/token-count';
import type { ChatMessage, ResolvedModel, Usage } from '../providers/types';
import type { MessageRow } from '../store/store';
import { CompactionError } from './errors';

/** Longest text of one message in the transcript (characters; head and tail kept, the middle cut with a note). */
export const TRANSCRIPT_MESSAGE_MAX_CHARS = 8_000;
/** Share of the model's window the summariser's request may fill (the rest is the summary and headroom). */
export const SUMMARY_INPUT_FILL = 0.6;
/** Most transcript characters when the window is unknown. */
export const TRANSCRIPT_MAX_CHARS_UNKNOWN_WINDOW = 400_000;
/** Most tokens the summary may take (the request's max_tokens). */
export const SUMMARY_MAX_OUTPUT_TOKENS = 2_000;

export const SUMMARY_INSTRUCTIONS = [
  'You compact a conversation between a user and Vox, a coding agent working in the user\'s workspace, so that the agent can go on with the summary in place of the messages.',
  'Answer with the summary only, in exactly this markdown shape: four level-2 headings, in this order, each followed by its content (write "None." when a section has nothing):',
  ...SUMMARY_SECTIONS.map((s) => `## ${s}`),
  'Goal: what the user wants overall. Decisions: what was decided or done, and why. Files touched: the paths read, created or changed, with a few words each.',
  'Open items: what is unfinished, failing or still to be asked. Keep exact names, paths, commands and numbers; do not invent anything.',
].join('\n');

function clip(s: string): string {
  if (s.length <= TRANSCRIPT_MESSAGE_MAX_CHARS) return s;
  const head = Math.floor(TRANSCRIPT_MESSAGE_MAX_CHARS / 2);
  return `${s.slice(0, head)}\n… [${s.length - TRANSCRIPT_MESSAGE_MAX_CHARS} characters cut] …\n${s.slice(s.length - (TRANSCRIPT_MESSAGE_MAX_CHARS - head))}`;
}

/** The transcript of the covered units, oldest dropped first (with a note) when it exceeds `maxChars`. */
export function transcriptOf(units: readonly PathUnit<MessageRow>[], maxChars: number): string {
  const parts = units.map((u) =>
    u.kind === 'summary'
      ? `### Earlier summary (${u.covered} messages)\n${u.compaction.summary}`
      : `### ${u.message.role === 'user' ? 'User' : 'Assistant'}\n${clip(u.message.content)}`,
  );
  let total = parts.reduce((n, p) => n + p.length + 2, 0);
  let dropped = 0;
  while (parts.length > 1 && total > maxChars) {
    total -= parts.shift()!.length + 2;
    dropped++;
  }
  return (dropped > 0 ? `[${dropped} earlier messages left out: too long to summarise in one request]\n\n` : '') + parts.join('\n\n');
}

export interface SummaryOutcome { summary: string; usage: Usage }

/** Asks `model` for the summary of `units`; throws ProviderError (the call) or CompactionError (the answer). */
export async function summarize(model: ResolvedModel, units: readonly PathUnit<MessageRow>[], window: number | null, signal?: AbortSignal): Promise<SummaryOutcome> {
  const budgetTokens = window === null ? null : Math.floor(window * SUMMARY_INPUT_FILL) - approximateTokens(SUMMARY_INSTRUCTIONS);
  const maxChars = budgetTokens === null ? TRANSCRIPT_MAX_CHARS_UNKNOWN_WINDOW : Math.max(1_000, Math.floor(budgetTokens * 3));
  const messages: ChatMessage[] = [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    { role: 'user', content: `<conversation>\n${transcriptOf(units, maxChars)}\n</conversation>\n\nWrite the summary of this conversation now, in the four sections.` },
  ];
  let text = '';
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for await (const ev of model.provider.stream({ model: model.model, messages, tools: [], maxTokens: SUMMARY_MAX_OUTPUT_TOKENS, ...(signal ? { signal } : {}) })) {
    if (ev.type === 'text') text += ev.delta;
    else if (ev.type === 'usage') {
      usage.inputTokens += ev.usage.inputTokens;
      usage.outputTokens += ev.usage.outputTokens;
    }
  }
  const summary = normaliseSummary(text);
  const problem = summaryProblem(summary);
  if (problem) throw new CompactionError('invalidSummary', `${model.label} did not answer with a summary (${problem}); nothing was compacted`);
  return { summary, usage };
}
