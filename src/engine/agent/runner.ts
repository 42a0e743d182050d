/**
 * AgentRunner: the loop of one turn — call the model, review its reply, run its tool calls under
 * the approval policy, settle — recording everything as events (items, the final message,
 * `run.ended` with usage) while chunks stream through the TurnStreamRegistry. Capabilities shape
 * the turn through the stages of ./hooks.ts (the request, the stream, the step's control value,
 * a tool's arguments and result), never by editing this loop; tool calls go through
 * ./tool-call.ts. A run is started by the run registry (../runs/); this module only executes it.
 * Cancellation works at any point; a failure or cancel keeps the text that already streamed.
 */
import { allocate, derive } from '../ids/ids';
import type { ChatMessage, ToolCall, ToolSpec, Usage, StopReason } from '../providers/types';
import { isProviderError } from '../providers/types';
import { ToolError } from '../tools/types';
import { encodeRefusalRetry, encodeTextRevised } from '../../protocol/chunks';
import { OWNER_ENDED_ERROR, type EndedRunStatus, type RunFailure } from '../../protocol/events';
import { rebuildTurn } from './resume';
import { redact } from '../platform/secrets';
import { turnFailureOf, turnFailureText, type RunInfo, type StepControl, type TurnRequest } from './hooks';
import { FULL_DISK_ANSWER_CHARS, FULL_DISK_ANSWER_NOTE, MAX_AGENT_STEPS, TOOL_RESULT_MAX_CHARS } from './limits';
import { isDiskFull } from '../platform/disk-full';
import { quote } from '../../protocol/wire/quote';
import { addUsage, callModel } from './model-call';
import { ToolCalls, truncate } from './tool-call';

export { MAX_AGENT_STEPS, TOOL_RESULT_MAX_CHARS };
export { STEERED_TOOL_RESULT, type AgentRunnerDeps, type SteerPrompt, type TurnBackground, type TurnResult, type TurnSpec } from './turn-spec';
import { STEERED_TOOL_RESULT, type AgentRunnerDeps, type TurnResult, type TurnSpec } from './turn-spec';

export class AgentRunner {
  constructor(private readonly deps: AgentRunnerDeps) {}

  /** Runs the turn to its end; never rejects (a failure is the turn's status). */
  async run(t: TurnSpec): Promise<TurnResult> {
    const { store, streams } = this.deps;
    const { threadId, runId, signal, hooks } = t;
    const info: RunInfo = { threadId, runId, workspaceRoot: t.workspaceRoot, model: t.model.label };
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    const scratch = new Map<string, unknown>();
    let finalText = '';
    let itemOrdinal = 0;
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
    let failure: RunFailure | null = null;
    let lastStop: StopReason = 'end';
    try {
      if (t.resume) await t.resume.waitOut();
      else await hooks.run('turnStart', info);
      const request = await this.prepare(t, info, scratch);
      const { messages } = request;
      const specs: ToolSpec[] = t.model.toolsEnabled ? request.tools.offered.map((x) => x.spec) : [];
      const tools = new ToolCalls(this.deps, t, info, request.tools);
      const resumed = t.resume ? rebuildTurn(store, runId) : null;
      if (resumed) {
        messages.push(...resumed.messages);
        finalText = resumed.text;
        itemOrdinal = resumed.nextOrdinal;
        addUsage(usage, resumed.usage);
      } else {
        // Work that finished after an earlier turn (not awaited) reports now, just before the new prompt.
        const report = t.background?.takeReport();
        if (report) messages.splice(messages.length - 1, 0, { role: 'user', content: report });
      }
      const steer = (preempted: ToolCall[]) => tools.landSteers(nextItem, preempted.map((c) => c.name));
      for (let step = 0; ; step++) {
        if (step >= MAX_AGENT_STEPS) throw new Error(`stopped after ${MAX_AGENT_STEPS} model calls in one turn`);
        if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
        for (const prompt of steer([])) messages.push(request.userMessage(prompt));
        await hooks.run('beforeModelCall', { ...info, step, turn: t, specs, scratch }, { messages });
        const stepStart = finalText.length;
        const called = await callModel(this.deps, t, info, step, scratch, messages, specs, usage, (delta) => (finalText += delta));
        addUsage(usage, called.stepUsage);
        lastStop = called.stopReason;
        await hooks.run('afterModelCall', { ...info, step, text: called.stepText, toolCalls: called.calls, usage: called.stepUsage });
        const { control } = await hooks.run('reviewStep', { ...info, step, text: called.stepText, toolCalls: called.calls, scratch }, { control: { kind: 'keep' } as StepControl });
        if (control.kind === 'stop') throw control.error;
        if (control.kind === 'retry') {
          finalText = finalText.slice(0, stepStart); // the refusal leaves the answer; the note keeps it readable
          const { id, ordinal } = nextItem();
          store.append({ type: 'run.refusalRetried', threadId, runId, itemId: id, ordinal, discarded: called.stepText, tools: control.tools });
          streams.append(runId, 'refusalRetry', encodeRefusalRetry({ itemId: id, discarded: called.stepText, tools: control.tools }));
          messages.push({ role: 'user', content: control.reminder });
          continue;
        }
        const stepText = control.kind === 'replace' ? control.displayText : called.stepText;
        const calls = control.kind === 'replace' ? control.calls : called.calls;
        if (stepText !== called.stepText) {
          finalText = finalText.slice(0, stepStart) + stepText;
          streams.append(runId, 'textRevised', encodeTextRevised({ removed: called.stepText.length, text: stepText }));
        }
        if (stepText.length > 0) {
          const { id, ordinal } = nextItem();
          store.append(
            { type: 'item.started', threadId, runId, itemId: id, ordinal, kind: 'text', toolName: null, arguments: null },
            { type: 'item.completed', threadId, runId, itemId: id, status: 'completed', content: stepText, isError: false },
          );
        }
        if (control.kind === 'replace') {
          // Calls the reply carried in another form run through the same path; `report` says what the model is told of them.
          const steers = steer(calls);
          const results = [];
          for (const call of calls) results.push({ call, result: steers.length > 0 ? { content: STEERED_TOOL_RESULT, isError: true } : await tools.run(call, nextItem()) });
          control.report(messages, results, steers);
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
        const steers = steer(calls);
        if (steers.length > 0) {
          // The batch never starts: each call gets a "not run" result (the APIs want one per call), then the new instructions.
          for (const call of calls) messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: STEERED_TOOL_RESULT, isError: true });
          for (const prompt of steers) messages.push(request.userMessage(prompt));
          separate();
          continue;
        }
        for (const call of calls) {
          const result = await tools.run(call, nextItem());
          messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: truncate(result.content, TOOL_RESULT_MAX_CHARS), isError: !!result.isError });
        }
        separate();
      }
    } catch (e) {
      const cancelled = signal.aborted || (isProviderError(e) && e.code === 'cancelled') || (e instanceof ToolError && e.code === 'cancelled');
      status = cancelled ? 'cancelled' : 'failed';
      // A provider may echo the key back in its error: never stored or shown (platform/secrets.ts).
      error = cancelled ? null : redact(turnFailureText(e));
      failure = cancelled ? null : turnFailureOf(e);
    }
    if (status === 'cancelled' && t.suspended?.()) return { threadId, runId, status: 'interrupted', text: finalText, error: null, usage };
    // The engine shutting down (a window reload or close) cut the turn: not the user's stop.
    const ownerEnded = status === 'cancelled' && t.shuttingDown?.() === true;
    if (ownerEnded) {
      status = 'interrupted';
      error = OWNER_ENDED_ERROR;
    }
    try {
      this.recordEnd(t, { status, error, failure, usage, finalText, lastStop, ownerEnded });
    } catch (e) {
      // Not even the disk reserve held the run's end: the run failed, and the clients are told why.
      status = 'failed';
      error = redact(turnFailureText(e));
      failure = turnFailureOf(e);
      // The answer itself may be what the disk had no room for: the end again, with its start only.
      // Should that fail too, the store still says running and the next start closes the run.
      if (isDiskFull(e) && finalText.length > FULL_DISK_ANSWER_CHARS) {
        try {
          this.recordEnd(t, { status, error, failure, usage, finalText: quote(finalText, FULL_DISK_ANSWER_CHARS) + FULL_DISK_ANSWER_NOTE, lastStop, ownerEnded: false });
        } catch {
          // Left for the next start, as above.
        }
      }
    }
    streams.end(runId, error ? { status, error, ...(failure ? { failure } : {}) } : { status });
    await hooks.run('turnEnd', { ...info, status }).catch(() => undefined); // stopsTurn is moot once the turn ended
    return { threadId, runId, status, text: finalText, error, usage };
  }

  /** The run's end in the store (the final message, `run.ended`): written even on a full disk, from the store's reserve. */
  private recordEnd(t: TurnSpec, end: { status: EndedRunStatus; error: string | null; failure: RunFailure | null; usage: Usage; finalText: string; lastStop: StopReason; ownerEnded: boolean }): void {
    const { threadId, runId } = t;
    const { status, error, usage, finalText, lastStop, ownerEnded } = end;
    const msgStatus = status === 'completed' ? 'complete' : status === 'cancelled' ? 'cancelled' : status === 'interrupted' ? 'interrupted' : 'failed';
    this.deps.store.appendEnding(
      ...(finalText.length > 0 || status === 'completed'
        ? [{ type: 'message.added' as const, threadId, messageId: allocate('msg'), parentId: t.userMessageId, role: 'assistant' as const, content: finalText, runId, status: msgStatus as 'complete' }]
        : []),
      // `length`: the reply stopped at the output-token limit; clients offer Continue.
      {
        type: 'run.ended', threadId, runId, status, error, usage: { ...usage },
        ...(status === 'completed' ? { stopReason: lastStop === 'length' ? 'length' as const : 'end' as const } : {}), ...(ownerEnded ? { cause: 'ownerEnded' as const } : {}),
        ...(end.failure ? { failure: end.failure } : {}),
      },
    );
  }

  /**
   * The turn's request before its first call: the system prompt, the registry's tools, then the
   * prepareRequest stage (history, rules, Plan mode, the tool catalog, handoff, app contexts).
   */
  private async prepare(t: TurnSpec, info: RunInfo, scratch: Map<string, unknown>): Promise<TurnRequest> {
    const messages: ChatMessage[] = [{ role: 'system', content: this.deps.systemPrompt ?? '' }];
    const request: TurnRequest = {
      get system() {
        return messages[0]!.content;
      },
      set system(s: string) {
        messages[0] = { role: 'system', content: s };
      },
      messages,
      tools: { offered: this.deps.tools.list(), lookup: () => undefined, route: (call) => call },
      userMessage: (text) => ({ role: 'user', content: text }),
    };
    return t.hooks.run('prepareRequest', { ...info, turn: t, scratch }, request);
  }
}
