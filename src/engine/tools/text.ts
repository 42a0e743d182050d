/** What the tools share about text: the output budget of one call, the binary sniff, the surrogate-safe cut. */

/**
 * The output limit: characters of one tool result the model is sent. The agent loop
 * (agent/runner.ts) cuts any longer result to it, keeping its head and tail around a notice, so no
 * tool (an MCP server's included) can flood the context. 32_000 characters is about 8k tokens:
 * a whole source file of ordinary size, a long test log's tail, while a few results still fit a
 * small model's context beside the conversation.
 */
export const TOOL_RESULT_MAX_CHARS = 32_000;
/**
 * Room kept under TOOL_RESULT_MAX_CHARS for the notices a tool writes after its output (the lines
 * left out, the exit code, where a search stopped), so the loop's cut never reaches them.
 */
export const TOOL_NOTICE_RESERVE_CHARS = 2_000;
/**
 * Characters of output a tool gathers before its notices: the output limit less their reserve.
 * Not a second limit: every tool bounds itself with this so its result arrives under the limit whole.
 */
export const TOOL_OUTPUT_BUDGET_CHARS = TOOL_RESULT_MAX_CHARS - TOOL_NOTICE_RESERVE_CHARS;
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
