/**
 * The price cards Vox ships with (SPEC 3.4's bundled snapshot), in LiteLLM's
 * `model_prices_and_context_window.json` entry format: dollars per token, cache reads and the
 * 5-minute / 1-hour cache writes priced apart, Anthropic's long-context (above 200k prompt tokens)
 * tier. Written from the providers' published list prices as of `BUNDLED_PRICES_VERSION`; a
 * user's price (`vox prices set`, the `setPrice` command) wins over a card here.
 */
export const BUNDLED_PRICES_VERSION = '2025-11-20';

const M = 1e-6; // $ per million tokens → $ per token

/** Anthropic's cards: a cache read is 0.1× input, a 5-minute write 1.25×, a 1-hour write 2×. */
function anthropic(input: number, output: number, longContext?: { input: number; output: number }): Record<string, number> {
  const card: Record<string, number> = {
    input_cost_per_token: input * M, output_cost_per_token: output * M,
    cache_read_input_token_cost: input * 0.1 * M, cache_creation_input_token_cost: input * 1.25 * M,
    cache_creation_input_token_cost_above_1hr: input * 2 * M,
  };
  if (longContext) {
    Object.assign(card, {
      input_cost_per_token_above_200k_tokens: longContext.input * M, output_cost_per_token_above_200k_tokens: longContext.output * M,
      cache_read_input_token_cost_above_200k_tokens: longContext.input * 0.1 * M, cache_creation_input_token_cost_above_200k_tokens: longContext.input * 1.25 * M,
      cache_creation_input_token_cost_above_1hr_above_200k_tokens: longContext.input * 2 * M,
    });
  }
  return card;
}

/** OpenAI's cards: cached input at the listed rate (cache writes cost nothing extra). */
function openai(input: number, cached: number, output: number): Record<string, number> {
  return { input_cost_per_token: input * M, cache_read_input_token_cost: cached * M, cache_creation_input_token_cost: input * M, output_cost_per_token: output * M };
}

export const BUNDLED_PRICES: Readonly<Record<string, Record<string, number>>> = {
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  'o3': openai(2, 0.5, 8),
  'o4-mini': openai(1.1, 0.275, 4.4),
  'claude-sonnet-4-5': anthropic(3, 15, { input: 6, output: 22.5 }),
  'claude-sonnet-4': anthropic(3, 15, { input: 6, output: 22.5 }),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
};
