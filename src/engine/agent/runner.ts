/**
 * AgentRunner: the loop of one turn — stream the model, run its tool calls under the approval
 * policy, loop until the model answers without tools — recording everything as events (items,
 * the final message, `run.ended` with usage) while chunks stream through the TurnStreamRegistry
 * (persisted as they arrive). Capabilities act on the turn through the hook stages
 * (./hooks.ts), never by editing this loop. A run is started (thread, user message, `run.started`)
 * by the run registry (../runs/); this module only executes it. Cancellation works at any point;
 * a failure or cancel keeps the text that already streamed.
 */
import { allocate, derive } from '../ids/ids';
import type { ChatMessage, ResolvedModel, ToolCall, ToolSpec, Usage } from '../providers/types';
import { isProviderError } from '../providers/types';
import type { AgentTool, ToolResult } from '../tools/types';
import { ToolError } from '../tools/types';
import { encodeRefusalRetry, encodeSteer, encodeTextRevised, encodeToolCall, encodeToolResult } from '../../protocol/chunks';
import { TurnSalvage } from '../salvage/turn-salvage';
import type { EndedRunStatus } from '../../protocol/events';
import { buildHistory, DEFAULT_SYSTEM_PROMPT } from './history';
import { rebuildTurn } from './resume';
import { openCommandOutput } from './command-output';
import { redact } from '../platform/secrets';
import { turnFailureText, type RunInfo } from './hooks';
import type { PermissionDecision } from '../permissions/decide';
import { offeredTools, planPort, turnSystemPrompt } from '../plans/offer';
import { countPrompt, countSourceOf, countText } from '../providers/token-count';
import type { StopReason } from '../providers/types';

import { MAX_AGENT_STEPS, TOOL_RESULT_MAX_CHARS } from './limits';
import type { SamplingSettings } from '../../protocol/posture';
import { splitReasoning } from '../sanitize/stream'; // inline <think> blocks → the reasoning channel
import { escapeUserInput } from '../sanitize/history';
import { applyHandoff } from '../handoff/apply';
import { catalogSpecs, catalogThreshold, turnToolCatalog, type TurnToolCatalog } from '../mcp-catalog/catalog';
import { appOfResult } from '../mcp-apps/resource';
import { applyMcpAppContext } from '../mcp-apps/context';

export { MAX_AGENT_STEPS, TOOL_RESULT_MAX_CHARS };

export { STEERED_TOOL_RESULT, type AgentRunnerDeps, type SteerPrompt, type TurnBackground, type TurnResult, type TurnSpec } from './turn-spec';
import { STEERED_TOOL_RESULT, type AgentRunnerDeps, type TurnResult, type TurnSpec } from './turn-spec';

/** Keeps the start and, mostly, the end of a long result (a command's last lines matter most), with a note of what was cut. */
function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const head = Math.floor(max / 4);
  return `${s.slice(0, head)}\n… [${s.length - max} characters cut] …\n${s.slice(s.length - (max - head))}`;
}

function addUsage(total: Usage, u: Usage): void {
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  for (const k of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
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

export class AgentRunner {
  constructor(private readonly deps: AgentRunnerDeps) {}

  /** Runs the turn to its end; never rejects (a failure is the turn's status). */
  async run(t: TurnSpec): Promise<TurnResult> {
    const { store, streams } = this.deps;
    const { threadId, runId, signal, hooks } = t;
    const info: RunInfo = { threadId, runId, workspaceRoot: t.workspaceRoot, model: t.model.label };
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    // SPEC 3.3: above the threshold of MCP tools, the built-ins and 3 meta-tools instead of every schema (../mcp-catalog/).
    const catalog = turnToolCatalog(offeredTools(this.deps.tools, this.deps.plans, threadId), catalogThreshold(this.deps.toolCatalogThreshold?.()));
    const offered = catalog.offered;
    const specs: ToolSpec[] = catalogSpecs(catalog, t.model.toolsEnabled);
    // SPEC 3.2: false-refusal retry and tool calls written as text (../salvage/); the fence syntax is told to models without native tools.
    const salvage = new TurnSalvage(offered, t.model.toolsEnabled);
    const plain = () => turnSystemPrompt(this.deps.plans, threadId, this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT);
    const system = salvage.systemPrompt(this.deps.systemPromptFor ? await this.deps.systemPromptFor(threadId).catch(plain) : plain());
    const history = buildHistory(store.activePath(threadId, t.userMessageId), system, (r) => store.steers(r), store.compactions(threadId));
    const last = history[history.length - 1];
    if (t.userRules && last?.role === 'user') history[history.length - 1] = { ...last, content: `${last.content}\n\n${t.userRules}` };
    // Another model than the run before (or a chosen strategy): a <context_handoff> preamble; a failure leaves the request as it was.
    await applyHandoff(store, t, history, { record: !t.resume, ...(t.handoff ? { choice: t.handoff } : {}) }).catch(() => null);
    applyMcpAppContext(store, t, history); // SPEC 5.3: <mcp_app_context> blocks of the apps' saved states
    const resumed = t.resume ? rebuildTurn(store, runId) : null;
    const messages: ChatMessage[] = resumed ? [...history, ...resumed.messages] : history;
    let finalText = resumed?.text ?? '';
    let itemOrdinal = resumed?.nextOrdinal ?? 0;
    if (resumed) addUsage(usage, resumed.usage);
    else {
      // Work that finished after an earlier turn (not awaited) reports now, just before the new prompt.
      const report = t.background?.takeReport();
      if (report) messages.splice(messages.length - 1, 0, { role: 'user', content: report });
    }
    const itemId = () => derive('item', [['run', runId], ['n', String(itemOrdinal)]]);
    const nextItem = () => ({ id: itemId(), ordinal: itemOrdinal++ });
    // Between model steps the text gets a paragraph break (the final message is the steps' text joined).
    const separate = () => {
      if (finalText.length > 0 && !finalText.endsWith('\n')) {
        finalText += '\n\n';
        streams.append(runId, 'text', '\n\n');
      }
    };
    let status: EndedRunStatus = 'completed';
    let error: string | null = null;
    let lastStop: StopReason = 'end';
    try {
      if (t.resume) await t.resume.waitOut();
      else await hooks.run('turnStart', info);
      for (let step = 0; ; step++) {
        if (step >= MAX_AGENT_STEPS) throw new Error(`stopped after ${MAX_AGENT_STEPS} model calls in one turn`);
        if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
        for (const prompt of this.landSteers(t, nextItem, [])) messages.push({ role: 'user', content: escapeUserInput(prompt) });
        if (this.deps.compactBeforeCall) await this.deps.compactBeforeCall(t, messages, specs); // ../compaction/auto.ts
        await hooks.run('beforeModelCall', { ...info, step, messages });
        const stepStart = finalText.length;
        const { stepText: rawText, calls: nativeCalls, stepUsage, stopReason } = await this.callModel(t, info, messages, specs, usage, (delta) => (finalText += delta));
        addUsage(usage, stepUsage);
        lastStop = stopReason;
        await hooks.run('afterModelCall', { ...info, step, text: rawText, toolCalls: nativeCalls, usage: stepUsage });
        const review = salvage.review(rawText, nativeCalls);
        if (review.kind === 'retry') {
          finalText = finalText.slice(0, stepStart); // the refusal leaves the answer; the note keeps it readable
          const { id, ordinal } = nextItem();
          store.append({ type: 'run.refusalRetried', threadId, runId, itemId: id, ordinal, discarded: rawText, tools: salvage.toolNames });
          streams.append(runId, 'refusalRetry', encodeRefusalRetry({ itemId: id, discarded: rawText, tools: salvage.toolNames }));
          messages.push({ role: 'user', content: review.reminder });
          continue;
        }
        const stepText = review.kind === 'salvaged' ? review.displayText : rawText;
        const calls = review.kind === 'salvaged' ? review.calls : nativeCalls;
        if (review.kind === 'salvaged' && stepText !== rawText) {
          finalText = finalText.slice(0, stepStart) + stepText;
          streams.append(runId, 'textRevised', encodeTextRevised({ removed: rawText.length, text: stepText }));
        }
        if (stepText.length > 0) {
          const id = itemId();
          itemOrdinal++;
          store.append(
            { type: 'item.started', threadId, runId, itemId: id, ordinal: itemOrdinal - 1, kind: 'text', toolName: null, arguments: null },
            { type: 'item.completed', threadId, runId, itemId: id, status: 'completed', content: stepText, isError: false },
          );
        }
        if (review.kind === 'salvaged') {
          // The calls the model wrote as text run through the same path; their results (and any broken blocks) go back as text.
          const steers = this.landSteers(t, nextItem, calls.map((c) => c.name));
          await salvage.continueSalvaged(messages, rawText, review, steers, (call) => this.runTool(t, info, call, itemId(), itemOrdinal++, catalog), STEERED_TOOL_RESULT);
          separate();
          continue;
        }
        if (calls.length === 0) {
          // Settlement: awaited background work finishes, and its results go to the model, before the turn ends.
          const report = await t.background?.settle(signal, (titles) => streams.append(runId, 'status', `Waiting for background work: ${titles.join('; ')}`));
          if (!report) break;
          streams.append(runId, 'status', '');
          messages.push({ role: 'assistant', content: stepText }, { role: 'user', content: report });
          separate();
          continue;
        }
        messages.push({ role: 'assistant', content: stepText, toolCalls: calls });
        const steers = this.landSteers(t, nextItem, calls.map((c) => c.name));
        if (steers.length > 0) {
          // The batch never starts: each call gets a "not run" result (the APIs want one per call), then the new instructions.
          for (const call of calls) messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: STEERED_TOOL_RESULT, isError: true });
          for (const prompt of steers) messages.push({ role: 'user', content: escapeUserInput(prompt) });
          separate();
          continue;
        }
        for (const call of calls) {
          const result = await this.runTool(t, info, call, itemId(), itemOrdinal++, catalog);
          messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: truncate(result.content, TOOL_RESULT_MAX_CHARS), isError: !!result.isError });
        }
        separate();
      }
    } catch (e) {
      const cancelled = signal.aborted || (isProviderError(e) && e.code === 'cancelled') || (e instanceof ToolError && e.code === 'cancelled');
      status = cancelled ? 'cancelled' : 'failed';
      // A provider may echo the key back in its error: never stored or shown (platform/secrets.ts).
      error = cancelled ? null : redact(turnFailureText(e));
    }
    if (status === 'cancelled' && t.suspended?.()) return { threadId, runId, status: 'interrupted', text: finalText, error: null, usage };
    const msgStatus = status === 'completed' ? 'complete' : status === 'cancelled' ? 'cancelled' : 'failed';
    store.append(
      ...(finalText.length > 0 || status === 'completed'
        ? [{ type: 'message.added' as const, threadId, messageId: allocate('msg'), parentId: t.userMessageId, role: 'assistant' as const, content: finalText, runId, status: msgStatus as 'complete' }]
        : []),
      // `length`: the reply stopped at the output-token limit; clients offer Continue.
      { type: 'run.ended', threadId, runId, status, error, usage: { ...usage }, ...(status === 'completed' ? { stopReason: lastStop === 'length' ? 'length' as const : 'end' as const } : {}) },
    );
    streams.end(runId, error ? { status, error } : { status });
    await hooks.run('turnEnd', { ...info, status }).catch(() => undefined); // stopsTurn is moot once the turn ended
    return { threadId, runId, status, text: finalText, error, usage };
  }

  /** One model call, streamed; retried after a rate-limit wait when `recover` says so (the partial step text stays streamed). */
  private async callModel(t: TurnSpec, info: RunInfo, messages: ChatMessage[], specs: ToolSpec[], usage: Usage, onText: (delta: string) => void) {
    for (let attempt = 0; ; attempt++) {
      let stepText = '';
      let streamed = '';
      let stopReason: StopReason = 'end';
      let reported = false;
      const calls: ToolCall[] = [];
      const stepUsage: Usage = { inputTokens: 0, outputTokens: 0 };
      try {
        for await (const ev of splitReasoning(t.model.provider.stream({ model: t.model.model, messages, tools: specs, signal: t.signal, ...samplingRequest(t.sampling) }))) {
          if (ev.type === 'text' || ev.type === 'reasoning') {
            t.hooks.delta({ ...info, kind: ev.type, delta: ev.delta });
            if (ev.type === 'text') {
              stepText += ev.delta;
              onText(ev.delta);
            }
            streamed += ev.delta;
            this.deps.streams.append(t.runId, ev.type, ev.delta);
          } else if (ev.type === 'toolCall') {
            calls.push(ev.call);
            streamed += ev.call.argumentsJson;
          } else if (ev.type === 'usage') {
            addUsage(stepUsage, ev.usage);
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

  /**
   * A boundary: takes the steering prompts waiting for this turn and records where each landed
   * (`run.steered`, and a `steer` chunk for live views). `preempted` names the tool calls the
   * model had asked for that will not run because of them (only the first prompt carries them).
   */
  private landSteers(t: TurnSpec, nextItem: () => { id: string; ordinal: number }, preempted: string[]): string[] {
    const taken = t.takeSteers?.() ?? [];
    let skipped = preempted;
    for (const s of taken) {
      const { id, ordinal } = nextItem();
      this.deps.store.append({ type: 'run.steered', threadId: t.threadId, runId: t.runId, itemId: id, ordinal, entryId: s.entryId, prompt: s.prompt, skippedTools: skipped });
      this.deps.streams.append(t.runId, 'steer', encodeSteer({ itemId: id, prompt: s.prompt, skippedTools: skipped }));
      skipped = [];
    }
    return taken.map((s) => s.prompt);
  }

  /** The tool, its arguments and the permission decision, before the call is recorded (a failure here is the call's error). */
  private prepare(t: TurnSpec, call: ToolCall, catalog: TurnToolCatalog): { tool: AgentTool; args: unknown; permission: PermissionDecision | null } | { error: unknown } {
    try {
      const tool = catalog.lookup(call.name) ?? this.deps.tools.lookup(call.name);
      const args = tool.parseArgs(call.argumentsJson);
      const permission = this.deps.permissions
        ? this.deps.permissions(t.threadId, { toolName: call.name, toolClass: tool.toolClass, args, workspaceRoot: t.workspaceRoot })
        : null;
      return { tool, args, permission };
    } catch (error) {
      return { error };
    }
  }

  private async runTool(t: TurnSpec, info: RunInfo, modelCall: ToolCall, id: string, ordinal: number, catalog: TurnToolCatalog): Promise<ToolResult> {
    const { store, streams } = this.deps;
    const { threadId, runId, signal } = t;
    // An mcp_call is recorded, decided and approved as the real tool's call (../mcp-catalog/catalog.ts).
    const call = catalog.route(modelCall);
    const prepared = this.prepare(t, call, catalog);
    const permission = 'error' in prepared ? null : prepared.permission;
    store.append({
      type: 'item.started', threadId, runId, itemId: id, ordinal, kind: 'toolCall', toolName: call.name, arguments: call.argumentsJson,
      ...(permission ? { permission } : {}), ...(call.thoughtSignature !== undefined ? { thoughtSignature: call.thoughtSignature } : {}),
    });
    streams.append(runId, 'toolCall', encodeToolCall({ itemId: id, callId: call.id, name: call.name, arguments: call.argumentsJson, ...(permission ? { permission } : {}) }));
    let result: ToolResult | undefined;
    let itemStatus: 'completed' | 'denied' | 'failed' = 'completed';
    try {
      if ('error' in prepared) throw prepared.error;
      const { tool, args } = prepared;
      if (permission?.decision === 'deny') {
        // Refused by a rule or by Plan mode: the call never runs, and the model learns which rule and why.
        itemStatus = 'denied';
        result = { content: `Not run: ${permission.reason} Do not retry this call; choose another way or ask the user.`, isError: true };
      } else if (permission ? permission.decision === 'ask' : this.deps.policy().decide(tool) === 'ask') {
        const decision = await this.deps.gate.request({ callId: id, threadId, runId, toolName: call.name, argumentsJson: call.argumentsJson, toolClass: tool.toolClass }, signal);
        if (decision === 'denied') {
          itemStatus = 'denied';
          result = { content: `The user denied this ${call.name} call. Do not retry it; ask what they want instead.`, isError: true };
        }
      }
      if (itemStatus !== 'denied') {
        result = await this.runApproved(t, info, call, tool, args, id);
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
    // Tool output is stored, streamed and shown to the model: no secrets in it (a file may hold a key).
    const app = appOfResult(result!.app); // an MCP App (SPEC 5.3) travels with the result to the chat
    const final = { ...result!, content: redact(app && 'refused' in app ? `${result!.content}\n[The MCP App was not shown: ${app.refused}.]` : result!.content) };
    const shown = app && 'app' in app ? { app: { ...app.app, html: redact(app.app.html) } } : {};
    store.append({ type: 'item.completed', threadId, runId, itemId: id, status: itemStatus, content: final.content, isError: !!final.isError, ...shown });
    streams.append(runId, 'toolResult', encodeToolResult({ itemId: id, callId: call.id, status: itemStatus, content: truncate(final.content, TOOL_RESULT_MAX_CHARS), changedPaths: final.changedPaths ?? [], ...shown }));
    return final;
  }

  /** beforeTool → the tool → afterTool (also when the tool threw: a killed command may still have changed files). */
  private async runApproved(t: TurnSpec, info: RunInfo, call: ToolCall, tool: AgentTool, args: unknown, itemId: string): Promise<ToolResult> {
    await t.hooks.run('beforeTool', { ...info, call, tool });
    let result: ToolResult | null = null;
    let status: 'completed' | 'failed' | 'interrupted' = 'failed';
    try {
      const hub = this.deps.terminals;
      result = await tool.run(args, {
        ...this.deps.toolEnv, workspaceRoot: t.workspaceRoot, signal: t.signal,
        ...(t.background ? { background: t.background.port } : {}),
        ...(hub ? { terminal: () => openCommandOutput(hub, this.deps.streams, t.runId, itemId) } : {}),
        ...(this.deps.plans ? { plan: planPort(this.deps.plans, t.threadId, t.runId) } : {}),
      });
      status = result.isError ? 'failed' : 'completed';
      return result;
    } catch (e) {
      if (e instanceof ToolError && e.code === 'cancelled') status = 'interrupted';
      throw e;
    } finally {
      await t.hooks.run('afterTool', { ...info, call, tool, result, status });
    }
  }
}

/** The request fields of a turn's sampling settings (null and unset both leave the provider's default). */
function samplingRequest(s: SamplingSettings | undefined): { temperature?: number; topP?: number; reasoningEffort?: 'low' | 'medium' | 'high' } {
  return {
    ...(s?.temperature != null ? { temperature: s.temperature } : {}),
    ...(s?.topP != null ? { topP: s.topP } : {}),
    ...(s?.reasoningEffort != null ? { reasoningEffort: s.reasoningEffort } : {}),
  };
}
