/**
 * The agent loop's side of SPEC 3.2, one instance per turn: after each model call `review` says
 * whether the reply stands, is a false refusal to retry (once per turn, ./false-refusal.ts), or
 * carries tool calls written as text (./fenced-calls.ts); `continueSalvaged` runs those calls
 * through the loop's normal tool path and tells the model what came of them. It also owns what
 * the model is told: the fence syntax (only for models without native tools) and the reminder.
 *
 * Salvaged calls and their results go back to the model as text — its own reply as it wrote it,
 * then one user message with the results — never as native tool messages, which a model without
 * native tool calling (or its server) may not accept.
 */
import type { ChatMessage, ToolCall } from '../providers/types';
import type { AgentTool, ToolResult } from '../tools/types';
import { detectFalseToolRefusal } from './false-refusal';
import { salvageToolCalls, type SalvageProblem } from './fenced-calls';

/** Characters of one salvaged call's result given back to the model (as the loop caps native results). */
export const SALVAGED_RESULT_MAX_CHARS = 20_000;

export type StepReview =
  /** The reply stands as it is (an answer, or native tool calls). */
  | { kind: 'keep' }
  /** A false refusal: discard the reply, append `reminder`, call the model again. */
  | { kind: 'retry'; reminder: string }
  /** Tool calls (or broken attempts at them) written as text. */
  | { kind: 'salvaged'; calls: ToolCall[]; problems: SalvageProblem[]; displayText: string };

/** Parameter names of a tool, optional ones marked `?` (for the short fence prompt). */
function signature(tool: AgentTool): string {
  const schema = tool.spec.parameters as { properties?: Record<string, unknown>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const params = Object.keys(schema.properties ?? {}).map((p) => (required.has(p) ? p : `${p}?`));
  return `${tool.spec.name}(${params.join(', ')})`;
}

export class TurnSalvage {
  private retried = false;
  private salvagedSteps = 0;
  readonly toolNames: string[];

  /** `native`: the tools are offered to the provider as native tools (else only the fence syntax). */
  constructor(private readonly tools: readonly AgentTool[], private readonly native: boolean) {
    this.toolNames = tools.map((t) => t.spec.name);
  }

  /** The system prompt of the turn: for a model without native tools, followed by the fence syntax and the tools. */
  systemPrompt(base: string): string {
    if (this.native || this.tools.length === 0) return base;
    return [
      base,
      'You have no native tool calling. To call a tool, write a block on lines of its own; the arguments are one JSON object:',
      '```tool:read_file\n{"path": "src/a.ts"}\n```',
      'Simple arguments may go on the fence line instead: ```tool:read_file path=src/a.ts',
      'Write nothing after your blocks: Vox runs them in order and replies with their results.',
      `Tools: ${this.tools.map(signature).join('; ')}.`,
    ].join('\n');
  }

  /** What becomes of a model call's reply (`nativeCalls`: the tool calls the provider assembled). */
  review(text: string, nativeCalls: readonly ToolCall[]): StepReview {
    if (nativeCalls.length > 0 || this.tools.length === 0) return { kind: 'keep' };
    const found = salvageToolCalls(text, this.toolNames);
    // A native model's JSON about some other tool is an example in its answer, not a call; its fenced blocks are calls.
    const problems = this.native ? found.problems.filter((p) => !(p.code === 'unknownTool' && p.source === 'json')) : found.problems;
    if (found.calls.length > 0 || problems.length > 0) {
      const step = ++this.salvagedSteps;
      const calls = found.calls.map((c, i) => ({ id: `text-call-${step}-${i + 1}`, name: c.name, argumentsJson: c.argumentsJson }));
      return { kind: 'salvaged', calls, problems, displayText: found.calls.length > 0 ? found.displayText : text };
    }
    if (this.retried || !detectFalseToolRefusal(text, { toolsAvailable: true, toolCallsAssembled: 0 })) return { kind: 'keep' };
    this.retried = true;
    return { kind: 'retry', reminder: this.reminder() };
  }

  /** The message that follows a discarded refusal: the tools are there, use them. */
  reminder(): string {
    const how = this.native ? 'Call the tool that does what the user asked' : 'Call one by writing a ```tool:<name> block with its JSON arguments, as the system prompt shows';
    return `[Vox] Your previous reply said you could not use tools and was discarded: you do have tools in this conversation — ${this.toolNames.join(', ')}. ${how}; answer without tools only if none is needed.`;
  }

  /**
   * Goes on after a salvaged reply: the model's reply as it wrote it, then the calls (through
   * `runTool`, the loop's approval and permission path) unless steering prompts came first, then
   * one message with every result and every problem, then the steering prompts.
   */
  async continueSalvaged(
    messages: ChatMessage[], text: string, review: Extract<StepReview, { kind: 'salvaged' }>, steers: readonly string[],
    runTool: (call: ToolCall) => Promise<ToolResult>, steeredResult: string,
  ): Promise<void> {
    messages.push({ role: 'assistant', content: text });
    const results: { call: ToolCall; result: ToolResult }[] = [];
    for (const call of review.calls) {
      results.push({ call, result: steers.length > 0 ? { content: steeredResult, isError: true } : await runTool(call) });
    }
    messages.push({ role: 'user', content: salvageReport(results, review.problems, this.toolNames) });
    for (const prompt of steers) messages.push({ role: 'user', content: prompt });
  }
}

/** The one message that gives a salvaged reply's results and problems back to the model. */
export function salvageReport(results: readonly { call: ToolCall; result: ToolResult }[], problems: readonly SalvageProblem[], toolNames: readonly string[]): string {
  const parts = ['[Vox] The tool calls in your last reply, written as text:'];
  for (const { call, result } of results) {
    const content = result.content.length > SALVAGED_RESULT_MAX_CHARS ? `${result.content.slice(0, SALVAGED_RESULT_MAX_CHARS)}\n… [${result.content.length - SALVAGED_RESULT_MAX_CHARS} characters cut]` : result.content;
    parts.push(`${call.name} ${call.argumentsJson} → ${result.isError ? 'error' : 'result'}:\n${content}`);
  }
  for (const p of problems) parts.push(`${p.label} → not run (${p.code}): ${p.message}`);
  if (problems.length > 0 && !problems.some((p) => p.code === 'unknownTool')) parts.push(`The active tools are: ${toolNames.join(', ')}.`);
  return parts.join('\n\n');
}
