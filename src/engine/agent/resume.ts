/**
 * Rebuilds a run that waited for a rate limit when its process went away (VS Code restarted):
 * the conversation of the turn so far from its stored items — each step's text, the tool calls
 * it made with their results, the prompts that steered it — so the loop can retry the model call
 * it was waiting to make. Completed tool calls come back as results: nothing runs twice. The text
 * streamed so far (the turn's persisted chunks) is the start of the final message.
 */
import type { ChatMessage, ToolCall, Usage } from '../providers/types';
import type { VoxStore } from '../store/store';
import { cutText, TOOL_RESULT_MAX_CHARS } from '../tools/text';
import { applyRevision } from '../../protocol/revisions';

export interface RebuiltTurn {
  /** The turn's messages after the user's prompt (append them to the history). */
  messages: ChatMessage[];
  /** Text streamed so far. */
  text: string;
  /** The ordinal of the run's next item. */
  nextOrdinal: number;
  usage: Usage;
}

export function rebuildTurn(store: VoxStore, runId: string): RebuiltTurn {
  const messages: ChatMessage[] = [];
  let step: { content: string; calls: ToolCall[]; results: ChatMessage[] } | null = null;
  const flush = () => {
    if (step) messages.push({ role: 'assistant', content: step.content, ...(step.calls.length > 0 ? { toolCalls: step.calls } : {}) }, ...step.results);
    step = null;
  };
  let nextOrdinal = 0;
  for (const item of store.items(runId)) {
    nextOrdinal = Math.max(nextOrdinal, item.ordinal + 1);
    if (item.kind === 'text') {
      flush();
      step = { content: item.content, calls: [], results: [] };
    } else if (item.kind === 'toolCall') {
      step ??= { content: '', calls: [], results: [] };
      // The provider's call id is not kept; the item id is unique and pairs the call with its result.
      step.calls.push({ id: item.id, name: item.toolName ?? 'unknown', argumentsJson: item.arguments ?? '{}', ...(item.thoughtSignature !== null ? { thoughtSignature: item.thoughtSignature } : {}) });
      step.results.push({ role: 'tool', toolCallId: item.id, name: item.toolName ?? 'unknown', content: cutText(item.content, TOOL_RESULT_MAX_CHARS), isError: item.isError });
    } else if ((item.kind as string) === 'steer') {
      flush();
      messages.push({ role: 'user', content: item.content });
    }
  }
  flush();
  // Text chunks, with the replies a refusal retry discarded or salvage revised (SPEC 3.2) revised again.
  const text = store.chunksAfter(runId, 0).reduce((acc, c) => (c.kind === 'text' ? acc + c.data : applyRevision(acc, c.kind, c.data)), '');
  return { messages, text, nextOrdinal, usage: store.rateLimitWait(runId)?.usageSoFar ?? { inputTokens: 0, outputTokens: 0 } };
}
