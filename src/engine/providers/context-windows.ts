/**
 * Context window sizes (prompt + reply, in tokens) of the models Vox knows by name, for the
 * context meter. A provider that reports its own (the local llama.cpp context:
 * `ModelProvider.contextWindow`) wins; a model not in the table has an unknown window (null):
 * the meter then shows the count alone and nothing is blocked. Names are matched by prefix,
 * longest first, after an OpenRouter-style `vendor/` prefix is dropped. Figures are the
 * providers' published ones.
 */
import type { ResolvedModel } from './types';

/** Known windows by model-name prefix. */
export const KNOWN_CONTEXT_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ['gpt-4o', 128_000],
  ['chatgpt-4o', 128_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-4.5', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4-32k', 32_768],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['gpt-5', 400_000],
  ['gpt-oss', 131_072],
  ['o1-mini', 128_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['claude-', 200_000],
  ['gemini-', 1_048_576],
  ['deepseek-', 128_000],
  ['llama3.1', 128_000],
  ['llama3.2', 128_000],
  ['llama3', 8_192],
  ['qwen2.5-coder', 32_768],
  ['qwen2.5', 32_768],
  ['qwen3', 40_960],
  ['mistral', 32_768],
];

const BY_LENGTH = [...KNOWN_CONTEXT_WINDOWS].sort((a, b) => b[0].length - a[0].length);

/** The table's window for a model name, or null. */
export function knownContextWindow(model: string): number | null {
  const name = model.toLowerCase().replace(/^[a-z0-9_-]+\//, '');
  for (const [prefix, tokens] of BY_LENGTH) if (name.startsWith(prefix)) return tokens;
  return null;
}

export interface ContextWindow { tokens: number | null; source: 'provider' | 'table' | 'unknown' }

/** The model's window: what its provider reports, else the table's, else unknown. */
export async function contextWindowOf(model: ResolvedModel): Promise<ContextWindow> {
  const reported = model.provider.contextWindow ? await model.provider.contextWindow(model.model) : null;
  if (reported !== null && reported > 0) return { tokens: reported, source: 'provider' };
  const known = knownContextWindow(model.model);
  return known !== null ? { tokens: known, source: 'table' } : { tokens: null, source: 'unknown' };
}
