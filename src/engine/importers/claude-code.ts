/**
 * Claude Code transcripts → Vox events (a pure mapping: parsed JSONL lines in, builder calls out).
 *
 * Layout (observed in the fixtures recorded with the real CLIs, test/fixtures/importers/, and
 * FIELD-NOTES "Real agent CLIs, offline"): `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd slug>/`
 *   - `<sessionId>.jsonl` — the session (0-byte files are resume stubs);
 *   - 2.0.x: sub-agents flat beside it, `agent-<agentId>.jsonl` (lines carry the parent's
 *     `sessionId`; "Warmup" sidechains, whose first prompt is `Warmup`, are skipped);
 *   - 2.1.x: `<sessionId>/subagents/agent-<agentId>.jsonl` + `.meta.json` ({description, toolUseId, …}).
 * Lines: `user` (a prompt as a string or text blocks; `tool_result` blocks, `is_error` for tool
 * errors; `isMeta`, local-command echoes and `<task-notification>`s are not prompts;
 * `isCompactSummary` is the summary a compaction left), `assistant` (one content block per line,
 * several lines sharing `message.id` and its `usage`: thinking, text, tool_use), `system`
 * (`compact_boundary`, …), `summary` / `custom-title` (titles), and bookkeeping types Vox has no
 * use for (attachment, queue-operation, file-history-snapshot, api-request*, last-prompt,
 * tools-used, cost-state, mode, atis-latch), each skipped by name and counted.
 */
import type { ThreadBuilder } from './builder';
import { skip, timeOf, type ImportTally } from './types';

/** Line types that carry nothing for a Vox thread, skipped deliberately (counted under their own name). */
export const CLAUDE_SKIPPED_TYPES = new Set([
  'attachment', 'queue-operation', 'file-history-snapshot', 'api-request', 'api-request-shape', 'api-request-blob',
  'last-prompt', 'tools-used', 'cost-state', 'mode', 'atis-latch', 'progress', 'ai-title', 'pr-link', 'tag',
]);

/** User strings that are Claude Code's own echoes of local commands, not prompts. */
const LOCAL_COMMAND = /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>/;
const TASK_NOTIFICATION = /^\s*<task-notification>/;

type Block = { type?: string; text?: string; thinking?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; is_error?: boolean };

/** The text of tool_result content: a string, or text blocks (images as a placeholder). */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return (content as Block[]).map((b) => (b.type === 'text' ? (b.text ?? '') : b.type === 'image' ? '[image]' : '')).filter((s) => s.length > 0).join('\n');
}

export interface ClaudeLineContext {
  /** A sidechain (sub-agent) file: its first prompt `Warmup` makes it a warm-up, skipped whole. */
  sidechain: boolean;
  /** Set by the parser when the sidechain turned out to be a warm-up (kept in the file's state). */
  warmup: boolean;
  fallbackTime: number;
}

/** Maps one parsed line onto the builder; what it does not map it counts as skipped, by reason. */
export function claudeLine(raw: unknown, b: ThreadBuilder, tally: ImportTally, ctx: ClaudeLineContext): void {
  if (typeof raw !== 'object' || raw === null) return skip(tally, 'notAnObject');
  const j = raw as Record<string, unknown>;
  const type = typeof j.type === 'string' ? j.type : '';
  if (ctx.warmup) return skip(tally, 'warmupSidechain');
  const time = timeOf(j.timestamp, ctx.fallbackTime);
  ctx.fallbackTime = time;
  b.setMeta({ cwd: str(j.cwd), gitBranch: str(j.gitBranch), version: str(j.version) });
  const uuid = str(j.uuid);
  switch (type) {
    case 'user':
      return userLine(j, uuid, b, tally, ctx, time);
    case 'assistant':
      return assistantLine(j, uuid, b, tally, time);
    case 'system':
      return skip(tally, `system:${str(j.subtype) ?? 'other'}`);
    case 'summary':
      if (typeof j.summary === 'string') b.rename(j.summary, time);
      return;
    case 'custom-title': {
      const t = str(j.customTitle) ?? str(j.title);
      if (t) b.rename(t, time);
      return;
    }
    default:
      return skip(tally, CLAUDE_SKIPPED_TYPES.has(type) ? type : `unknownType:${type || 'none'}`);
  }
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}

function userLine(j: Record<string, unknown>, uuid: string | null, b: ThreadBuilder, tally: ImportTally, ctx: ClaudeLineContext, time: number): void {
  const message = j.message as { content?: unknown } | undefined;
  const content = message?.content;
  if (!uuid) return skip(tally, 'noUuid');
  if (j.isCompactSummary === true) {
    return b.note(uuid, blockText(content), time);
  }
  if (j.isMeta === true) return skip(tally, 'meta');
  if (typeof content === 'string') {
    if (LOCAL_COMMAND.test(content)) return skip(tally, 'localCommand');
    if (TASK_NOTIFICATION.test(content)) return skip(tally, 'taskNotification');
    if (ctx.sidechain && content.trim() === 'Warmup' && !b.state.created) {
      ctx.warmup = true;
      return skip(tally, 'warmupSidechain');
    }
    return b.prompt(uuid, content, time);
  }
  if (!Array.isArray(content)) return skip(tally, 'emptyUserLine');
  const texts: string[] = [];
  for (const block of content as Block[]) {
    if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
      if (!b.toolResult(block.tool_use_id, blockText(block.content), block.is_error === true, time)) skip(tally, 'orphanToolResult');
    } else if (block.type === 'text' && typeof block.text === 'string') {
      texts.push(block.text);
    } else if (block.type === 'image') {
      texts.push('[image]');
    }
  }
  const text = texts.join('\n');
  if (text.length === 0) return;
  if (LOCAL_COMMAND.test(text)) return skip(tally, 'localCommand');
  if (TASK_NOTIFICATION.test(text)) return skip(tally, 'taskNotification');
  b.prompt(uuid, text, time);
}

function assistantLine(j: Record<string, unknown>, uuid: string | null, b: ThreadBuilder, tally: ImportTally, time: number): void {
  const m = j.message as { id?: string; model?: string; content?: unknown; usage?: Record<string, number> } | undefined;
  if (!m || !uuid) return skip(tally, 'emptyAssistantLine');
  b.setModel(m.model);
  const blocks = Array.isArray(m.content) ? (m.content as Block[]) : typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : [];
  blocks.forEach((block, i) => {
    const key = `${uuid}:${i}`;
    if (block.type === 'text') b.text(key, block.text ?? '', time);
    else if (block.type === 'thinking') b.reasoning(key, block.thinking ?? '', time);
    else if (block.type === 'redacted_thinking') skip(tally, 'redactedThinking');
    else if (block.type === 'tool_use' && typeof block.id === 'string') b.toolCall(block.id, block.name ?? 'unknown', JSON.stringify(block.input ?? {}), time);
    else skip(tally, `unknownBlock:${block.type ?? 'none'}`);
  });
  const u = m.usage;
  if (u) {
    const cacheRead = u.cache_read_input_tokens ?? 0;
    const cacheWrite = u.cache_creation_input_tokens ?? 0;
    b.usage(m.id ?? uuid, { inputTokens: (u.input_tokens ?? 0) + cacheRead + cacheWrite, outputTokens: u.output_tokens ?? 0, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite });
  }
}
