/**
 * AgentRunner: runs one turn of a thread — streams the model, executes tool calls under the
 * approval policy, loops until the model answers without tools — and records everything as
 * events (user message, run, items, final message) while chunks stream through the
 * TurnStreamRegistry (persisted as they arrive). Cancellation works at any point; a failure or
 * cancel keeps the text that already streamed.
 */
import { allocate, derive, deriveRunFromThreadOrdinal } from '../ids/ids';
import type { ChatMessage, ModelProvider, ToolCall, ToolSpec, Usage } from '../providers/types';
import { isProviderError } from '../providers/types';
import type { VoxStore } from '../store/store';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { AgentTool, ToolResult } from '../tools/types';
import { ToolError } from '../tools/types';
import type { ApprovalGate, ApprovalPolicy } from '../approvals/approval';
import { lookupTool } from '../tools/index';
import { buildHistory } from './history';
import type { RunStatus } from '../../protocol/events';

/** Most model calls in one turn before the run stops itself (guards against tool loops). */
export const MAX_AGENT_STEPS = 25;
/** Most characters of a tool result sent back to the model. */
export const TOOL_RESULT_MAX_CHARS = 32_000;

export interface ResolvedModel { provider: ModelProvider; model: string; label: string; toolsEnabled: boolean }

export interface AgentRunnerDeps {
  store: VoxStore;
  streams: TurnStreamRegistry;
  tools: Map<string, AgentTool>;
  policy: ApprovalPolicy;
  gate: ApprovalGate;
  workspaceRoot: string;
  systemPrompt?: string;
  /** Called before every mutating tool call (checkpoints hook in here). */
  beforeMutatingTool?: (info: { threadId: string; runId: string; call: ToolCall }) => Promise<void>;
  /**
   * Called after every mutating tool call that ran, whether it succeeded, failed or threw (a
   * killed command may still have changed files); not for denied calls. Must not throw. Variants
   * refresh their live diff stats here.
   */
  afterMutatingTool?: (info: { threadId: string; runId: string; call: ToolCall; changedPaths?: string[] }) => Promise<void> | void;
  /**
   * Called when a turn starts, before the first model call; not awaited (checkpoints prepare
   * their warm state here while the model thinks). Must not throw.
   */
  onTurnStart?: (info: { threadId: string; runId: string }) => void;
  /** Called when a turn ends, whatever its status. */
  onTurnEnd?: (info: { threadId: string; runId: string; status: RunStatus }) => Promise<void> | void;
}

export interface StartTurnOptions {
  threadId?: string;
  title?: string;
  prompt: string;
  model: ResolvedModel;
  parentMessageId?: string;
}

export interface TurnResult { threadId: string; runId: string; status: Exclude<RunStatus, 'running'>; text: string; error: string | null; usage: Usage }

export interface TurnHandle { threadId: string; runId: string; done: Promise<TurnResult>; cancel(): void }

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}\n… [truncated ${s.length - max} characters]`;
}

export class AgentRunner {
  private readonly active = new Map<string, AbortController>();
  constructor(private readonly deps: AgentRunnerDeps) {}

  /** Starts a turn; events for the user message and run are written before this returns. */
  startTurn(opts: StartTurnOptions): TurnHandle {
    const { store } = this.deps;
    const threadId = opts.threadId ?? allocate('thread');
    if (!opts.threadId) store.append({ type: 'thread.created', threadId, title: opts.title ?? opts.prompt.slice(0, 80) });
    else store.getThread(threadId);
    const parentId = opts.parentMessageId ?? store.activePath(threadId).at(-1)?.id ?? null;
    const ordinal = store.nextRunOrdinal(threadId);
    const runId = deriveRunFromThreadOrdinal(threadId, ordinal);
    const userMessageId = allocate('msg');
    store.append(
      { type: 'message.added', threadId, messageId: userMessageId, parentId, role: 'user', content: opts.prompt, runId: null, status: 'complete' },
      { type: 'run.started', threadId, runId, ordinal, provider: opts.model.provider.id, model: opts.model.label, ownerPid: process.pid, userMessageId },
    );
    this.deps.streams.open(runId);
    const ac = new AbortController();
    this.active.set(runId, ac);
    const done = this.run(threadId, runId, userMessageId, opts, ac.signal).finally(() => this.active.delete(runId));
    return { threadId, runId, done, cancel: () => ac.abort() };
  }

  cancel(runId: string): boolean {
    const ac = this.active.get(runId);
    ac?.abort();
    return !!ac;
  }

  /** Number of turns currently running. */
  activeCount(): number {
    return this.active.size;
  }

  cancelAll(): void {
    for (const ac of this.active.values()) ac.abort();
  }

  private async run(threadId: string, runId: string, userMessageId: string, opts: StartTurnOptions, signal: AbortSignal): Promise<TurnResult> {
    const { store, streams } = this.deps;
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    const messages: ChatMessage[] = buildHistory(store.activePath(threadId, userMessageId), this.deps.systemPrompt);
    const specs: ToolSpec[] = opts.model.toolsEnabled ? [...this.deps.tools.values()].map((t) => t.spec) : [];
    let finalText = '';
    let itemOrdinal = 0;
    const itemId = () => derive('item', [['run', runId], ['n', String(itemOrdinal)]]);
    let status: Exclude<RunStatus, 'running'> = 'completed';
    let error: string | null = null;
    try {
      this.deps.onTurnStart?.({ threadId, runId });
    } catch {
      // A hook must not stop the turn.
    }
    try {
      for (let step = 0; ; step++) {
        if (step >= MAX_AGENT_STEPS) throw new Error(`stopped after ${MAX_AGENT_STEPS} model calls in one turn`);
        if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
        let stepText = '';
        const calls: ToolCall[] = [];
        for await (const ev of opts.model.provider.stream({ model: opts.model.model, messages, tools: specs, signal })) {
          if (ev.type === 'text') {
            stepText += ev.delta;
            finalText += ev.delta;
            streams.append(runId, 'text', ev.delta);
          } else if (ev.type === 'reasoning') streams.append(runId, 'reasoning', ev.delta);
          else if (ev.type === 'toolCall') calls.push(ev.call);
          else if (ev.type === 'usage') {
            usage.inputTokens += ev.usage.inputTokens;
            usage.outputTokens += ev.usage.outputTokens;
          }
        }
        if (stepText.length > 0) {
          const id = itemId();
          itemOrdinal++;
          store.append(
            { type: 'item.started', threadId, runId, itemId: id, ordinal: itemOrdinal - 1, kind: 'text', toolName: null, arguments: null },
            { type: 'item.completed', threadId, runId, itemId: id, status: 'completed', content: stepText, isError: false },
          );
        }
        if (calls.length === 0) break;
        messages.push({ role: 'assistant', content: stepText, toolCalls: calls });
        for (const call of calls) {
          const result = await this.runTool(threadId, runId, call, itemId(), itemOrdinal++, signal);
          messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: truncate(result.content, TOOL_RESULT_MAX_CHARS), isError: !!result.isError });
        }
        if (finalText.length > 0 && !finalText.endsWith('\n')) {
          finalText += '\n\n';
          streams.append(runId, 'text', '\n\n');
        }
      }
    } catch (e) {
      const cancelled = signal.aborted || (isProviderError(e) && e.code === 'cancelled') || (e instanceof ToolError && e.code === 'cancelled');
      status = cancelled ? 'cancelled' : 'failed';
      error = cancelled ? null : (e as Error).message ?? String(e);
    }
    const msgStatus = status === 'completed' ? 'complete' : status === 'cancelled' ? 'cancelled' : 'failed';
    store.append(
      ...(finalText.length > 0 || status === 'completed'
        ? [{ type: 'message.added' as const, threadId, messageId: allocate('msg'), parentId: userMessageId, role: 'assistant' as const, content: finalText, runId, status: msgStatus as 'complete' }]
        : []),
      { type: 'run.ended', threadId, runId, status, error, usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } },
    );
    streams.end(runId, error ? { status, error } : { status });
    await this.deps.onTurnEnd?.({ threadId, runId, status });
    return { threadId, runId, status, text: finalText, error, usage };
  }

  private async runTool(threadId: string, runId: string, call: ToolCall, id: string, ordinal: number, signal: AbortSignal): Promise<ToolResult> {
    const { store, streams } = this.deps;
    store.append({ type: 'item.started', threadId, runId, itemId: id, ordinal, kind: 'toolCall', toolName: call.name, arguments: call.argumentsJson });
    streams.append(runId, 'toolCall', JSON.stringify({ itemId: id, callId: call.id, name: call.name, arguments: call.argumentsJson }));
    let result: ToolResult | undefined;
    let itemStatus: 'completed' | 'denied' | 'failed' = 'completed';
    try {
      const tool = lookupTool(this.deps.tools, call.name);
      const args = tool.parseArgs(call.argumentsJson);
      if (this.deps.policy.decide(tool) === 'ask') {
        const decision = await this.deps.gate.request({ callId: id, toolName: call.name, argumentsJson: call.argumentsJson, toolClass: tool.toolClass }, signal);
        if (decision === 'denied') {
          itemStatus = 'denied';
          result = { content: `The user denied this ${call.name} call. Do not retry it; ask what they want instead.`, isError: true };
        }
      }
      if (itemStatus !== 'denied') {
        if (tool.mutating) {
          await this.deps.beforeMutatingTool?.({ threadId, runId, call });
          try {
            result = await tool.run(args, { workspaceRoot: this.deps.workspaceRoot, signal });
          } finally {
            // The paths it changed, when it says (a tool that threw or does not say: unknown).
            await this.deps.afterMutatingTool?.({ threadId, runId, call, ...(result?.changedPaths ? { changedPaths: result.changedPaths } : {}) });
          }
        } else {
          result = await tool.run(args, { workspaceRoot: this.deps.workspaceRoot, signal });
        }
        if (result.isError) itemStatus = 'failed';
      }
    } catch (e) {
      if (e instanceof ToolError && e.code === 'cancelled') {
        store.append({ type: 'item.completed', threadId, runId, itemId: id, status: 'interrupted', content: 'cancelled', isError: true });
        throw e;
      }
      if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
      itemStatus = 'failed';
      const code = e instanceof ToolError ? e.code : 'io';
      result = { content: `Error (${code}): ${(e as Error).message}`, isError: true };
    }
    const final = result!;
    store.append({ type: 'item.completed', threadId, runId, itemId: id, status: itemStatus, content: final.content, isError: !!final.isError });
    streams.append(runId, 'toolResult', JSON.stringify({ itemId: id, callId: call.id, status: itemStatus, content: truncate(final.content, TOOL_RESULT_MAX_CHARS), changedPaths: final.changedPaths ?? [] }));
    return final;
  }
}
