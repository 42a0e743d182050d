/**
 * One model call of a turn, streamed: the provider's events (through the modelStream stage, where
 * the sanitiser splits inline reasoning) become text and reasoning chunks, tool calls and usage;
 * a call that fails is retried after a rate-limit wait when the turn's `recover` says so. A call
 * stopped mid-stream keeps its usage: what the provider reported, else an estimate.
 */
import type { ChatMessage, ProviderEvent, ResolvedModel, StopReason, ToolCall, ToolSpec, Usage } from '../providers/types';
import { countPrompt, countSourceOf, countText } from '../providers/token-count';
import type { SamplingSettings } from '../../protocol/posture';
import type { RunInfo, TurnScratch } from './hooks';
import type { AgentRunnerDeps, TurnSpec } from './turn-spec';

export function addUsage(total: Usage, u: Usage): void {
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  for (const k of ['cacheReadTokens', 'cacheWriteTokens', 'cacheWrite1hTokens', 'reasoningTokens'] as const) {
    if (u[k] !== undefined) total[k] = (total[k] ?? 0) + u[k];
  }
  if (u.estimated) total.estimated = true;
}

/**
 * The usage of a model call stopped mid-stream, which the provider never reported: the prompt and
 * what streamed so far, counted with the model's tokenizer (../providers/token-count.ts) and
 * marked estimated. A count that fails falls back to the approximation; it never fails the stop.
 */
async function estimateStoppedCall(model: ResolvedModel, messages: ChatMessage[], specs: ToolSpec[], streamed: string): Promise<Usage> {
  const source = countSourceOf(model);
  const input = await countPrompt(model, messages, specs).then((c) => c.tokens, () => countText('approximation', messages.map((m) => m.content).join('')));
  const output = await countText(source, streamed).catch(() => countText('approximation', streamed));
  return { inputTokens: input, outputTokens: output, estimated: true };
}

/** The request fields of a turn's sampling settings (null and unset both leave the provider's default). */
function samplingRequest(s: SamplingSettings | undefined): { temperature?: number; topP?: number; reasoningEffort?: 'low' | 'medium' | 'high' } {
  return {
    ...(s?.temperature != null ? { temperature: s.temperature } : {}),
    ...(s?.topP != null ? { topP: s.topP } : {}),
    ...(s?.reasoningEffort != null ? { reasoningEffort: s.reasoningEffort } : {}),
  };
}

export interface ModelCallResult { stepText: string; calls: ToolCall[]; stepUsage: Usage; stopReason: StopReason }

export async function callModel(
  deps: Pick<AgentRunnerDeps, 'streams'>, t: TurnSpec, info: RunInfo, step: number, scratch: TurnScratch,
  messages: ChatMessage[], specs: ToolSpec[], usage: Usage, onText: (delta: string) => void,
): Promise<ModelCallResult> {
  for (let attempt = 0; ; attempt++) {
    let stepText = '';
    let streamed = '';
    let stopReason: StopReason = 'end';
    let reported = false;
    const calls: ToolCall[] = [];
    const stepUsage: Usage = { inputTokens: 0, outputTokens: 0 };
    try {
      const raw: AsyncIterable<ProviderEvent> = t.model.provider.stream({ model: t.model.model, messages, tools: specs, signal: t.signal, ...samplingRequest(t.sampling) });
      const { stream } = t.hooks.runSync('modelStream', { ...info, step, scratch }, { stream: raw });
      for await (const ev of stream) {
        if (ev.type === 'text' || ev.type === 'reasoning') {
          t.hooks.delta({ ...info, kind: ev.type, delta: ev.delta });
          if (ev.type === 'text') {
            stepText += ev.delta;
            onText(ev.delta);
          }
          streamed += ev.delta;
          deps.streams.append(t.runId, ev.type, ev.delta);
        } else if (ev.type === 'toolCall') {
          calls.push(ev.call);
          streamed += ev.call.argumentsJson;
        } else if (ev.type === 'usage') {
          addUsage(stepUsage, ev.usage);
          // Facts of this one response (not summed into the run's totals): the cost ledger's receipt keeps them.
          if (ev.usage.responseId !== undefined) stepUsage.responseId = ev.usage.responseId;
          if (ev.usage.costUsd !== undefined) stepUsage.costUsd = (stepUsage.costUsd ?? 0) + ev.usage.costUsd;
          reported = true;
        } else if (ev.type === 'done') stopReason = ev.stopReason;
      }
      return { stepText, calls, stepUsage, stopReason };
    } catch (e) {
      if (t.signal.aborted) {
        // Stop keeps the tokens used: what the provider reported, else an estimate of this call.
        addUsage(usage, reported ? stepUsage : await estimateStoppedCall(t.model, messages, specs, streamed));
        throw e;
      }
      if (!t.recover) throw e;
      addUsage(usage, stepUsage);
      if (!(await t.recover(e, attempt, { ...usage }))) throw e;
    }
  }
}
