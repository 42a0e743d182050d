/**
 * The history sanitiser (SPEC 3.5): what is done to earlier messages when they are sent back to
 * a model (../agent/history.ts calls it; the stored messages keep what was written or typed).
 *   - Prior assistant turns: think/reason blocks are removed by the same rules as the streaming
 *     splitter (./think-tags.ts: code is literal, attributes allowed, nesting counted). A block
 *     still open at the message's end (a reply stopped mid-thought) is removed to the end too:
 *     it is unfinished reasoning, never part of the answer. `<WebSearch>…</WebSearch>` (results
 *     a search tool pasted into an answer) becomes WEB_SEARCH_PLACEHOLDER.
 *   - Raw user input: the chat-template control strings `<|im_start|>`, `<|im_end|>` and
 *     `<tool_call>` / `</tool_call>` are escaped as HTML entities (`&lt;|im_start|&gt;`,
 *     `&lt;tool_call&gt;`), so a pasted transcript cannot open a turn or fake a tool call in a
 *     template (ChatML, Hermes/Qwen tool calls) while the model still reads what was typed.
 */
import { splitThinkTags } from './think-tags';

export const WEB_SEARCH_PLACEHOLDER = '[web_search was called, results removed to save context.]';

const WEB_SEARCH_BLOCK = /<WebSearch>[\s\S]*?<\/WebSearch>/g;
const CONTROL_STRINGS = /<(\|im_start\||\|im_end\||\/?tool_call)>/gi;

/** A prior assistant message as it is resent: reasoning blocks removed, web search results replaced. */
export function sanitizeAssistantHistory(content: string): string {
  const { text } = splitThinkTags(content);
  return text.replace(WEB_SEARCH_BLOCK, WEB_SEARCH_PLACEHOLDER);
}

/** Raw user input as it is sent: chat-template control strings escaped. */
export function escapeUserInput(content: string): string {
  return content.replace(CONTROL_STRINGS, (_m, inner: string) => `&lt;${inner}&gt;`);
}
