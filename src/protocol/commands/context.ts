/**
 * Context commands: how much of the model's context window the next request would use (the
 * composer's meter), and what an `@` in the composer may attach (suggestions). The mentions
 * themselves travel with `sendPrompt` (./runs.ts) and are resolved by the engine.
 */
import { arrayOf, bool, int, literal, nullable, object, optional, refine, str } from '../wire/validators';
import { MAX_MENTIONS, contextChip, mention, mentionSuggestion } from '../mentions';
import { MAX_PROMPT_CHARS, modelRef, name } from './common';
import { defineCommand } from './define';

/** Longest query `suggestMentions` takes (what follows the `@`). */
export const MAX_MENTION_QUERY_CHARS = 200;
/** Most suggestions one answer carries. */
export const MAX_MENTION_SUGGESTIONS = 50;

export const mentionList = refine(arrayOf(mention), (l) => l.length <= MAX_MENTIONS, `at most ${MAX_MENTIONS} mentions`);

export const contextEstimate = object({
  /** Tokens the next request would send: system prompt, history, tools, the draft and its mentions. */
  tokens: int,
  /** The model's context window (null: unknown, nothing is blocked). */
  window: nullable(int),
  windowSource: literal('provider', 'table', 'unknown'),
  /** How the tokens were counted: a gpt-tokenizer encoding, the local model's tokenizer, the provider's own count (VS Code models), or an approximation. */
  source: literal('o200k_base', 'cl100k_base', 'llama.cpp', 'provider', 'approximation'),
  /** False when the request does not fit in the window. */
  fits: bool,
  model: str,
  parts: object({ system: int, history: int, tools: int, prompt: int, mentions: int }),
  /** The mentions resolved as they would be sent, with their sizes and warnings. */
  mentions: arrayOf(contextChip),
});

export const contextCommands = {
  estimateContext: defineCommand('estimateContext', {
    readOnly: true,
    summary: 'How many tokens the next request of a thread (null: a new one) would use with this draft and these mentions, against the model\'s context window.',
    requires: ['read'],
    params: {
      threadId: nullable(name),
      draft: refine(str, (s) => s.length <= MAX_PROMPT_CHARS, `at most ${MAX_PROMPT_CHARS} characters`),
      mentions: optional(mentionList),
      model: optional(modelRef),
    },
    result: contextEstimate,
  }),
  suggestMentions: defineCommand('suggestMentions', {
    readOnly: true,
    summary: 'What an @-mention may name for a query: workspace files and folders (fuzzy, .gitignore-aware), @problems, @terminal, @git, @selection and past threads, best first.',
    requires: ['read'],
    params: {
      query: refine(str, (s) => s.length <= MAX_MENTION_QUERY_CHARS, `at most ${MAX_MENTION_QUERY_CHARS} characters`),
      limit: optional(refine(int, (n) => n >= 1 && n <= MAX_MENTION_SUGGESTIONS, `1..${MAX_MENTION_SUGGESTIONS}`)),
    },
    result: object({ items: arrayOf(mentionSuggestion) }),
  }),
};
