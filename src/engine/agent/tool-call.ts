/**
 * One tool call of a turn, from the model's call to its stored result: routed and looked up
 * through the turn's tools (prepareRequest's offer), decided by the permission rules or the
 * approval policy (the gate waits for the user), then beforeTool (which may veto it or add to the
 * tool's context) → the tool → afterTool (which may rewrite the result) — also when the tool
 * threw: a killed command may still have changed files. Results are redacted before they are
 * stored, streamed or shown to the model. Also the steering boundary: prompts the user sent to
 * steer the turn land here, between model calls and before a tool batch.
 */
import type { ToolCall } from '../providers/types';
import type { AgentTool, ToolResult } from '../tools/types';
import { ToolError } from '../tools/types';
import { encodeSteer, encodeToolCall, encodeToolResult } from '../../protocol/chunks';
import type { PermissionInfo } from '../../protocol/events';
import { redact } from '../platform/secrets';
import { openCommandOutput } from './command-output';
import { HookFailure, turnFailureText, type RunInfo, type TurnTools } from './hooks';
import { TOOL_RESULT_MAX_CHARS } from './limits';
import type { AgentRunnerDeps, TurnSpec } from './turn-spec';

/** Keeps the start and, mostly, the end of a long result (a command's last lines matter most), with a note of what was cut. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const head = Math.floor(max / 4);
  return `${s.slice(0, head)}\n… [${s.length - max} characters cut] …\n${s.slice(s.length - (max - head))}`;
}

type Prepared = { tool: AgentTool; args: unknown; permission: PermissionInfo | null } | { error: unknown };

export class ToolCalls {
  constructor(private readonly deps: AgentRunnerDeps, private readonly t: TurnSpec, private readonly info: RunInfo, private readonly tools: TurnTools) {}

  /**
   * A boundary: takes the steering prompts waiting for this turn and records where each landed
   * (`run.steered`, and a `steer` chunk for live views). `preempted` names the tool calls the
   * model had asked for that will not run because of them (only the first prompt carries them).
   */
  landSteers(nextItem: () => { id: string; ordinal: number }, preempted: string[]): string[] {
    const { t } = this;
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
  private prepare(call: ToolCall): Prepared {
    try {
      const tool = this.tools.lookup(call.name) ?? this.deps.tools.lookup(call.name);
      const args = tool.parseArgs(call.argumentsJson);
      const permission = this.deps.permissions
        ? this.deps.permissions(this.t.threadId, { toolName: call.name, toolClass: tool.toolClass, args, workspaceRoot: this.t.workspaceRoot, runId: this.t.runId })
        : null;
      return { tool, args, permission };
    } catch (error) {
      return { error };
    }
  }

  /** Runs one call the model made; the result is what the model is told (never throws but for cancellation). */
  async run(modelCall: ToolCall, item: { id: string; ordinal: number }): Promise<ToolResult> {
    const { store, streams } = this.deps;
    const { threadId, runId, signal } = this.t;
    const { id, ordinal } = item;
    const call = this.tools.route(modelCall);
    const prepared = this.prepare(call);
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
        const why = permission ? { reason: permission.reason, ...(permission.source === 'protected' ? { protectedPath: true } : {}) } : {};
        const decision = await this.deps.gate.request({ callId: id, threadId, runId, toolName: call.name, argumentsJson: call.argumentsJson, toolClass: tool.toolClass, ...why }, signal);
        if (decision === 'denied') {
          itemStatus = 'denied';
          result = { content: `The user denied this ${call.name} call. Do not retry it; ask what they want instead.`, isError: true };
        }
      }
      if (itemStatus !== 'denied') {
        const ran = await this.runApproved(call, tool, args, id);
        if (ran.vetoed) itemStatus = 'denied';
        result = ran.result;
        if (result.isError && !ran.vetoed) itemStatus = 'failed';
      }
    } catch (e) {
      if (e instanceof ToolError && e.code === 'cancelled') {
        store.append({ type: 'item.completed', threadId, runId, itemId: id, status: 'interrupted', content: 'cancelled', isError: true });
        throw e;
      }
      if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
      if (e instanceof HookFailure && e.stage === 'beforeTool') {
        // A stage stopped the turn before the tool ran (the user would not go on after a failed checkpoint): the call is not run, the run fails.
        const content = `Not run: ${turnFailureText(e)}`;
        store.append({ type: 'item.completed', threadId, runId, itemId: id, status: 'denied', content, isError: true });
        streams.append(runId, 'toolResult', encodeToolResult({ itemId: id, callId: call.id, status: 'denied', content, changedPaths: [] }));
        throw e;
      }
      itemStatus = 'failed';
      const code = e instanceof ToolError ? e.code : 'io';
      result = { content: `Error (${code}): ${(e as Error).message}`, isError: true };
    }
    // Tool output is stored, streamed and shown to the model: no secrets in it (a file may hold a key).
    const final: ToolResult = { ...result!, content: redact(result!.content) };
    const shown = final.app ? { app: { ...final.app, html: redact(final.app.html) } } : {};
    store.append({ type: 'item.completed', threadId, runId, itemId: id, status: itemStatus, content: final.content, isError: !!final.isError, ...shown });
    streams.append(runId, 'toolResult', encodeToolResult({ itemId: id, callId: call.id, status: itemStatus, content: truncate(final.content, TOOL_RESULT_MAX_CHARS), changedPaths: final.changedPaths ?? [], ...shown }));
    return final;
  }

  /** beforeTool → the tool → afterTool. A veto of beforeTool is the call's result (the tool never runs). */
  private async runApproved(call: ToolCall, tool: AgentTool, parsed: unknown, itemId: string): Promise<{ result: ToolResult; vetoed: boolean }> {
    const { t, info } = this;
    const before = await t.hooks.run('beforeTool', { ...info, call, tool, turn: t, itemId }, { args: parsed, context: {} });
    if (before.veto !== undefined) return { result: { content: `Not run: ${before.veto}`, isError: true }, vetoed: true };
    let result: ToolResult | null = null;
    let status: 'completed' | 'failed' | 'interrupted' = 'failed';
    try {
      const hub = this.deps.terminals;
      result = await tool.run(before.args, {
        ...this.deps.toolEnv, ...before.context, workspaceRoot: t.workspaceRoot, signal: t.signal,
        ...(t.background ? { background: t.background.port } : {}),
        ...(hub ? { terminal: () => openCommandOutput(hub, this.deps.streams, t.runId, itemId) } : {}),
      });
      status = result.isError ? 'failed' : 'completed';
    } catch (e) {
      if (e instanceof ToolError && e.code === 'cancelled') status = 'interrupted';
      await t.hooks.run('afterTool', { ...info, call, tool, status, result }, { result });
      throw e;
    }
    const after = await t.hooks.run('afterTool', { ...info, call, tool, status, result }, { result });
    return { result: after.result ?? result, vetoed: false };
  }
}
