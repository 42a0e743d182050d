/** What the tools share about text: the output budget of one call, the binary sniff, the surrogate-safe cut. */

/**
 * Characters of output any one tool call returns. Kept under the agent loop's TOOL_RESULT_MAX_CHARS
 * (32_000, runner.ts), which cuts from the end, so each tool's own truncation notice survives.
 */
export const TOOL_OUTPUT_BUDGET_CHARS = 30_000;
/** Bytes inspected at the start of a file to decide whether it is binary (git uses 8000). */
export const BINARY_SNIFF_BYTES = 8192;
/** Why a byte sample is not text, or undefined when it looks like text. */
export function binaryReason(sample: Uint8Array): string | undefined {
  if (sample.length >= 2 && ((sample[0] === 0xff && sample[1] === 0xfe) || (sample[0] === 0xfe && sample[1] === 0xff))) {
    return 'it is UTF-16 encoded';
  }
  if (sample.includes(0)) return 'it contains NUL bytes';
  return undefined;
}

/** Cuts `text` to at most `maxChars` UTF-16 units without splitting a surrogate pair. */
export function cutText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}
