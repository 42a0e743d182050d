/**
 * The splitter on a provider's event stream (../agent/runner.ts wraps every model call with it):
 * text deltas pass ./think-tags.ts, so a model that writes its thinking inline (`<think>…`)
 * streams it on the reasoning channel like a provider that separates it itself (OpenAI-compatible
 * `reasoning_content`, node-llama-cpp's thought segments, which arrive as reasoning already and
 * pass unchanged). Other events pass in order; what the splitter holds is flushed at the end.
 */
import type { ProviderEvent } from '../providers/types';
import { ThinkTagSplitter, type SplitPart } from './think-tags';

export async function* splitReasoning(events: AsyncIterable<ProviderEvent>): AsyncGenerator<ProviderEvent> {
  const splitter = new ThinkTagSplitter();
  const asEvents = (parts: SplitPart[]): ProviderEvent[] => parts.map((p) => ({ type: p.kind, delta: p.delta }));
  for await (const ev of events) {
    if (ev.type === 'text') yield* asEvents(splitter.push(ev.delta));
    else yield ev;
  }
  yield* asEvents(splitter.flush());
}
