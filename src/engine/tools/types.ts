/**
 * Contract for the agent's tools: how a tool declares itself to the model, which approval class
 * it belongs to, how it parses its (untrusted) JSON arguments, and what it returns.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ToolSpec } from '../providers/types';

/** Approval classes: the policy decides per class whether a call is asked or automatic. */
export type ToolClass = 'read' | 'write' | 'execute';

export interface ToolContext {
  /** Absolute, canonical workspace root. Tools must never act outside it. */
  workspaceRoot: string;
  signal: AbortSignal;
  /** Live output (e.g. run_command stdout/stderr) as it arrives. */
  onOutput?: (chunk: string) => void;
  /** A ripgrep binary the search and listing tools may use (VS Code's bundled one, or rg on PATH); absent when none was found. */
  ripgrepPath?: string;
  /** The run's background work (subagents, background commands); absent where a run has none (tests of a single tool). */
  background?: BackgroundPort;
  /** Opens this call's live terminal output (shown in the chat while it runs); absent outside a turn. */
  terminal?: () => TerminalOutput;
  /** The thread's plan (../plans/): submit_plan and update_plan_step act through it; absent outside a turn. */
  plan?: PlanPort;
}

/** A plan as the plan tools see it. */
export interface PlanPortView { planId: string; title: string; steps: Array<{ id: string; text: string; status: string }> }

/** The run's access to its thread's plan (../plans/tools.ts). */
export interface PlanPort {
  submit(title: unknown, steps: Array<{ text: string }>): PlanPortView;
  updateStep(planId: string, stepId: string, status: 'pending' | 'inProgress' | 'done' | 'skipped', note: string | null): PlanPortView;
}

/** A command's output as a terminal shows it (../agent/command-output.ts). */
export interface TerminalOutput {
  /** Output as it arrives, cut anywhere. */
  write(chunk: string): void;
  /** The command ended: the normalised plain text (bounded, with a note of what was cut). */
  end(exitCode: number | null): string;
}

/** How a piece of background work ended. */
export type BackgroundEnd = { status: 'completed' | 'failed' | 'cancelled' | 'interrupted'; result: string };

/** Work a tool started that outlives the call: a background command (the subagents the port starts itself). */
export interface BackgroundJob {
  kind: 'command' | 'subagent';
  /** One line for lists and reports, e.g. the command line. */
  title: string;
  awaited: boolean;
  done: Promise<BackgroundEnd>;
  /** What it has to show so far (a command's output tail). */
  peek(): string;
  /** Stops it; `done` then settles as cancelled. */
  kill(): void;
}

export interface BackgroundStatusView { handle: string; kind: 'command' | 'subagent'; title: string; awaited: boolean; status: 'running' | BackgroundEnd['status']; output: string; threadId: string | null }

/**
 * A run's background work (../runs/background.ts): every job gets a handle the model uses with
 * `command_status` / `command_kill`; awaited jobs are waited for before the run ends, the others
 * report into the thread when they finish; stopping the run stops them all.
 */
export interface BackgroundPort {
  /** Starts a subagent: a child thread running `task` with its own loop and the same tools and approval policy. */
  spawnSubagent(req: { task: string; title?: string; awaited: boolean; model?: string }): Promise<{ handle: string; threadId: string }>;
  /** Tracks a job a tool started; returns its handle. */
  track(job: BackgroundJob): string;
  status(handle: string): BackgroundStatusView;
  kill(handle: string): Promise<BackgroundStatusView>;
}

export interface ToolResult {
  /** Text returned to the model. */
  content: string;
  isError?: boolean;
  /** Workspace-relative paths this call changed (write tools), for checkpoints and the UI. */
  changedPaths?: string[];
  /** An MCP App (SPEC 5.3) the call returned: a UI resource the chat renders in a sandboxed frame. */
  app?: McpAppResource;
}

/** A UI resource an MCP tool returned (`ui://…`, HTML), as the chat renders it (../mcp/, ../mcp-apps/). */
export interface McpAppResource {
  /** The resource URI, e.g. `ui://weather/widget`. */
  uri: string;
  /** The HTML document (rendered in a sandboxed iframe, never same-origin with the chat). */
  html: string;
  /** The server that returned it. */
  server: string;
  title: string | null;
}

/** Where a tool comes from: a built-in, or a tool of an MCP server (the tool-catalog guard counts these). */
export type ToolOrigin = { kind: 'builtin' } | { kind: 'mcp'; server: string; tool: string };

export interface AgentTool<A = unknown> {
  spec: ToolSpec;
  toolClass: ToolClass;
  /** True when the tool can change files or run arbitrary code. */
  mutating: boolean;
  /** Absent: a built-in. MCP tools carry their server and own name. */
  origin?: ToolOrigin;
  /** Parses and validates the model's raw JSON arguments; throws `ToolError('invalidArguments')`. */
  parseArgs(argumentsJson: string): A;
  run(args: A, ctx: ToolContext): Promise<ToolResult>;
}

export type ToolErrorCode = ErrorCode<'tool'>;

export class ToolError extends VoxError<'tool'> {
  override readonly name = 'ToolError';
  readonly domain = 'tool' as const;
  constructor(code: ToolErrorCode, message: string) {
    super(code, message);
  }
}
