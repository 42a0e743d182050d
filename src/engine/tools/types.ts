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
}

export interface ToolResult {
  /** Text returned to the model. */
  content: string;
  isError?: boolean;
  /** Workspace-relative paths this call changed (write tools), for checkpoints and the UI. */
  changedPaths?: string[];
}

export interface AgentTool<A = unknown> {
  spec: ToolSpec;
  toolClass: ToolClass;
  /** True when the tool can change files or run arbitrary code. */
  mutating: boolean;
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
