/**
 * Codex rollouts → Vox events (a pure mapping: parsed JSONL lines in, builder calls out).
 *
 * Layout (observed in the fixtures recorded with the real CLIs 0.63.0 and 0.171.0,
 * test/fixtures/importers/, and FIELD-NOTES "Real agent CLIs, offline"):
 * `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<sessionId>.jsonl`; `exec resume`
 * appends the resumed turns to the same file. Each line is `{timestamp, type, payload}` (0.17x adds
 * `ordinal`):
 *   - `session_meta` {id, cwd, cli_version, git {branch}} — the thread;
 *   - `response_item` — what the model saw and said, the source of truth here: `message` (user
 *     prompts; `<environment_context>`/`<user_instructions>` user messages and `developer`
 *     messages are context, skipped), `reasoning` (summary texts), `function_call` /
 *     `function_call_output` (shell_command, exec_command, shell, …; the exit code is read from
 *     the output's "Exit code: N" / "Process exited with code N" or its JSON metadata),
 *     `custom_tool_call` / `custom_tool_call_output` (apply_patch), `local_shell_call`,
 *     `ghost_snapshot` (Codex's own undo commits, skipped);
 *   - `event_msg` — UI events: 0.6x `user_message` / `agent_message` / `agent_reasoning` repeat
 *     response items (skipped as duplicates); `token_count` carries the session's running usage
 *     totals (a run gets the growth of the total); 0.17x `item_completed` repeats items too,
 *     and its `CommandExecution` carries `exit_code`, used for the matching call's error flag;
 *   - `turn_context` (model, cwd), 0.17x `world_state`, `token_usage_record`, … skipped by name.
 */
import type { ThreadBuilder } from './builder';
import { skip, timeOf, type ImportTally } from './types';

/** Payload types of `event_msg` that only repeat response items or report UI state. */
export const CODEX_SKIPPED_EVENTS = new Set([
  'user_message', 'agent_message', 'agent_reasoning', 'agent_reasoning_raw_content', 'agent_reasoning_section_break',
  'task_started', 'task_complete', 'turn_aborted', 'thread_settings_applied', 'exec_command_begin', 'exec_command_end',
  'patch_apply_begin', 'patch_apply_end', 'mcp_tool_call_begin', 'mcp_tool_call_end', 'context_compacted', 'entered_review_mode',
  'exited_review_mode', 'plan_update', 'web_search_begin', 'web_search_end', 'item_started', 'error', 'stream_error',
]);
/** Top-level line types with nothing for a thread. */
export const CODEX_SKIPPED_TYPES = new Set(['world_state', 'token_usage_record', 'compacted']);
/** User messages Codex writes itself (context for the model, not prompts). */
const CONTEXT_MESSAGE = /^\s*(<environment_context>|<user_instructions>|<permissions|<skills_instructions>|# AGENTS\.md|<INSTRUCTIONS>|<user_shell_command>)/;

export interface CodexLineContext {
  fallbackTime: number;
  /** The session's usage totals at the last `token_count`, to give each run its growth. */
  lastTotals: { input: number; cached: number; output: number; reasoning: number } | null;
  /** Exit codes from 0.17x `item_completed` CommandExecution items, by call id, until the output arrives. */
  exitCodes: Record<string, number>;
  line: number;
}

type Payload = Record<string, unknown> & { type?: string };

function str(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return (content as { text?: string }[]).map((c) => c.text ?? '').filter((s) => s.length > 0).join('\n');
}

/** A tool output's exit code when it states one. */
export function exitCodeOf(output: string): number | null {
  const m = /(?:^|\n)(?:Exit code:|Process exited with code) (-?\d+)/.exec(output);
  if (m) return Number(m[1]);
  if (output.startsWith('{')) {
    try {
      const j = JSON.parse(output) as { metadata?: { exit_code?: number } };
      if (typeof j.metadata?.exit_code === 'number') return j.metadata.exit_code;
    } catch {
      // plain text
    }
  }
  return null;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') {
    if (output.startsWith('{"output"')) {
      try {
        return String((JSON.parse(output) as { output: unknown }).output);
      } catch {
        return output;
      }
    }
    return output;
  }
  if (output && typeof output === 'object' && 'content' in output) return String((output as { content: unknown }).content);
  return JSON.stringify(output ?? '');
}

/** Maps one parsed rollout line onto the builder; what it does not map it counts as skipped, by reason. */
export function codexLine(raw: unknown, b: ThreadBuilder, tally: ImportTally, ctx: CodexLineContext): void {
  ctx.line++;
  if (typeof raw !== 'object' || raw === null) return skip(tally, 'notAnObject');
  const j = raw as { timestamp?: unknown; type?: string; payload?: Payload; ordinal?: number };
  const time = timeOf(j.timestamp, ctx.fallbackTime);
  ctx.fallbackTime = time;
  const p = j.payload ?? {};
  const key = typeof j.ordinal === 'number' ? `o${j.ordinal}` : `l${ctx.line}`;
  switch (j.type) {
    case 'session_meta': {
      const git = p.git as { branch?: string } | undefined;
      b.setMeta({ cwd: str(p.cwd), gitBranch: str(git?.branch), version: str(p.cli_version) });
      return;
    }
    case 'turn_context':
      b.setModel(str(p.model));
      b.setMeta({ cwd: str(p.cwd) });
      return;
    case 'response_item':
      return responseItem(p, key, b, tally, ctx, time);
    case 'event_msg':
      return eventMsg(p, b, tally, ctx);
    default:
      return skip(tally, CODEX_SKIPPED_TYPES.has(j.type ?? '') ? (j.type as string) : `unknownType:${j.type ?? 'none'}`);
  }
}

function responseItem(p: Payload, key: string, b: ThreadBuilder, tally: ImportTally, ctx: CodexLineContext, time: number): void {
  switch (p.type) {
    case 'message': {
      const text = contentText(p.content);
      if (p.role === 'user') {
        if (CONTEXT_MESSAGE.test(text)) return skip(tally, 'contextMessage');
        return b.prompt(key, text, time);
      }
      if (p.role === 'assistant') return b.text(key, text, time);
      return skip(tally, `message:${String(p.role)}`);
    }
    case 'reasoning': {
      const summary = Array.isArray(p.summary) ? (p.summary as { text?: string }[]).map((s) => s.text ?? '').join('\n') : '';
      const content = Array.isArray(p.content) ? contentText(p.content) : '';
      return b.reasoning(key, summary || content, time);
    }
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call': {
      const callId = str(p.call_id) ?? str(p.id);
      if (!callId) return skip(tally, 'toolCallWithoutId');
      const args = p.type === 'function_call' ? String(p.arguments ?? '') : p.type === 'custom_tool_call' ? String(p.input ?? '') : JSON.stringify(p.action ?? {});
      return b.toolCall(callId, str(p.name) ?? (p.type === 'local_shell_call' ? 'local_shell' : 'unknown'), args, time);
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const callId = str(p.call_id);
      if (!callId) return skip(tally, 'orphanToolResult');
      const raw = typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? '');
      const code = ctx.exitCodes[callId] ?? exitCodeOf(raw);
      delete ctx.exitCodes[callId];
      const failed = code !== null && code !== 0;
      if (!b.toolResult(callId, outputText(p.output), failed, time)) skip(tally, 'orphanToolResult');
      return;
    }
    case 'ghost_snapshot':
      return skip(tally, 'ghostSnapshot');
    default:
      return skip(tally, `unknownItem:${p.type ?? 'none'}`);
  }
}

function eventMsg(p: Payload, b: ThreadBuilder, tally: ImportTally, ctx: CodexLineContext): void {
  if (p.type === 'token_count') {
    const info = p.info as { total_token_usage?: Record<string, number> } | null | undefined;
    const t = info?.total_token_usage;
    if (!t) return skip(tally, 'tokenCountWithoutInfo');
    const now = { input: t.input_tokens ?? 0, cached: t.cached_input_tokens ?? 0, output: t.output_tokens ?? 0, reasoning: t.reasoning_output_tokens ?? 0 };
    const last = ctx.lastTotals;
    // A total below the last one is a new session's count (resume in a new process): it counts from zero.
    const base = last && now.input >= last.input && now.output >= last.output ? last : { input: 0, cached: 0, output: 0, reasoning: 0 };
    ctx.lastTotals = now;
    if (now.input === base.input && now.output === base.output) return; // the same total written twice
    b.usage(null, {
      inputTokens: now.input - base.input, outputTokens: now.output - base.output,
      cacheReadTokens: Math.max(0, now.cached - base.cached), reasoningTokens: Math.max(0, now.reasoning - base.reasoning),
    });
    return;
  }
  if (p.type === 'item_completed') {
    const item = p.item as { type?: string; id?: string; exit_code?: number } | undefined;
    if (item?.type === 'CommandExecution' && typeof item.id === 'string' && typeof item.exit_code === 'number') ctx.exitCodes[item.id] = item.exit_code;
    return skip(tally, `itemCompleted:${item?.type ?? 'none'}`);
  }
  return skip(tally, CODEX_SKIPPED_EVENTS.has(p.type ?? '') ? `event:${p.type}` : `unknownEvent:${p.type ?? 'none'}`);
}
