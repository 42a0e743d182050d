/**
 * What one run looks like on screen, derived from its RunView (./thread-state.ts): an ordered
 * list of blocks — text (markdown), reasoning (collapsible), tool calls, and the prompts that
 * steered the turn where they landed.
 *
 * While the run streams, blocks follow the live chunks, with tool calls known only from events
 * (e.g. one waiting for approval whose chunk is still in the 33 ms batch) appended. Once the final
 * assistant `message.added` arrives it is the truth and replaces the streamed text: the run's
 * text items (one per model step) are matched against it in order, so the text stays interleaved
 * with the tool calls exactly as it streamed, and whatever the items do not cover (a step cut by
 * Stop) follows as the last block. If the items do not line up with the final text, the tool
 * calls come first and the final text follows whole — never both the streamed and final text.
 */
import type { ItemView, RunView, StreamSegment, ToolResultView } from './thread-state';
import type { PermissionInfo } from '../../../src/protocol/events';
import type { McpAppView } from '../../../src/protocol/mcp-apps';

export type ToolStatus = 'running' | 'completed' | 'denied' | 'failed' | 'interrupted';

export interface ToolView {
  itemId: string;
  callId: string | null;
  name: string;
  /** Arguments as JSON text (as the model wrote them). */
  arguments: string;
  status: ToolStatus;
  result: string | null;
  isError: boolean;
  changedPaths: string[];
  /** A command's output as a terminal shows it (styled lines), streamed while it ran; null when none came. */
  output: string[] | null;
  /** What the permission rules or mode decided for the call (absent: an older engine, or the call never got that far). */
  permission?: PermissionInfo;
  /** The MCP App the call returned (SPEC 5.3), rendered under the card, and the state it saved. */
  app?: McpAppView;
  appState?: string;
}

export type Block =
  | { kind: 'text'; key: string; text: string; streaming: boolean }
  | { kind: 'reasoning'; key: string; text: string; streaming: boolean }
  | { kind: 'tool'; key: string; tool: ToolView }
  /** A queued prompt the turn took mid-run, where it landed; `skippedTools` did not run because of it. */
  | { kind: 'steer'; key: string; prompt: string; skippedTools: string[] }
  /** SPEC 3.2: a false refusal the turn discarded (readable when expanded) before asking the model again. */
  | { kind: 'refusalRetry'; key: string; discarded: string; tools: string[] };

function refusalBlock(itemId: string, discarded: string, tools: readonly string[]): Block {
  return { kind: 'refusalRetry', key: `refusal:${itemId}`, discarded, tools: [...tools] };
}

/** The note block of a refusalRetry item (null for other items). */
function noteBlock(item: ItemView): Block | null {
  return item.kind === 'refusalRetry' ? refusalBlock(item.itemId, item.content ?? '', item.tools ?? []) : null;
}

function steerBlock(itemId: string, prompt: string, skippedTools: readonly string[]): Block {
  return { kind: 'steer', key: `steer:${itemId}`, prompt, skippedTools: [...skippedTools] };
}

/** Separator the runner streams between model steps when the text so far does not end a line. */
const STEP_SEPARATOR = '\n\n';

const TOOL_STATUSES: readonly string[] = ['completed', 'denied', 'failed', 'interrupted'];

function toolStatus(item: ItemView | undefined, result: ToolResultView | null, runOver: boolean): ToolStatus {
  if (item && item.status !== 'started') return item.status;
  if (result && TOOL_STATUSES.includes(result.status)) return result.status as ToolStatus;
  return runOver ? 'interrupted' : 'running';
}

function toolView(run: RunView, itemId: string, seg: Extract<StreamSegment, { kind: 'tool' }> | undefined): ToolView {
  const item = run.items.find((i) => i.itemId === itemId);
  const result = seg?.result ?? null;
  const runOver = run.status !== 'running';
  const content = item?.content ?? result?.content ?? null;
  return {
    itemId,
    callId: seg?.callId ?? null,
    name: (seg?.name || item?.toolName) ?? 'tool',
    arguments: (seg?.arguments || item?.arguments) ?? '',
    status: toolStatus(item, result, runOver),
    result: content,
    isError: item ? item.isError : result !== null && result.status !== 'completed',
    changedPaths: result?.changedPaths ?? [],
    output: seg?.output ? [...seg.output.frozen, ...seg.output.live] : null,
    ...(item?.permission ?? seg?.permission ? { permission: (item?.permission ?? seg?.permission)! } : {}),
    ...(item?.app ?? result?.app ? { app: (item?.app ?? result?.app)! } : {}),
    ...(item?.appState !== undefined ? { appState: item.appState } : {}),
  };
}

function streamSegmentFor(run: RunView, itemId: string): Extract<StreamSegment, { kind: 'tool' }> | undefined {
  for (const s of run.stream) if (s.kind === 'tool' && s.itemId === itemId) return s;
  return undefined;
}

/** Blocks while the run has no final message: live chunks first, event-only tool calls after. */
function liveBlocks(run: RunView): Block[] {
  const streaming = run.status === 'running';
  if (run.stream.length === 0) return itemBlocks(run, streaming);
  const out: Block[] = [];
  const counts = { text: 0, reasoning: 0 };
  const seen = new Set<string>();
  for (const seg of run.stream) {
    if (seg.kind === 'tool') {
      seen.add(seg.itemId);
      out.push({ kind: 'tool', key: `tool:${seg.itemId}`, tool: toolView(run, seg.itemId, seg) });
    } else if (seg.kind === 'steer') {
      seen.add(seg.itemId);
      out.push(steerBlock(seg.itemId, seg.prompt, seg.skippedTools));
    } else if (seg.kind === 'refusalRetry') {
      seen.add(seg.itemId);
      out.push(refusalBlock(seg.itemId, seg.discarded, seg.tools));
    } else {
      out.push({ kind: seg.kind, key: `${seg.kind}:${counts[seg.kind]++}`, text: seg.text, streaming: false });
    }
  }
  for (const item of run.items) {
    if (seen.has(item.itemId)) continue;
    if (item.kind === 'toolCall') out.push({ kind: 'tool', key: `tool:${item.itemId}`, tool: toolView(run, item.itemId, undefined) });
    else if (item.kind === 'steer') out.push(steerBlock(item.itemId, item.content ?? '', item.skippedTools ?? []));
    else if (item.kind === 'refusalRetry') out.push(noteBlock(item)!);
  }
  markLastStreaming(out, streaming);
  return out;
}

/** Blocks from events alone (no chunks seen: history, or the stream was unavailable). */
function itemBlocks(run: RunView, streaming: boolean): Block[] {
  const out: Block[] = [];
  const counts = { text: 0, reasoning: 0 };
  for (const item of run.items) {
    if (item.kind === 'toolCall') out.push({ kind: 'tool', key: `tool:${item.itemId}`, tool: toolView(run, item.itemId, streamSegmentFor(run, item.itemId)) });
    else if (item.kind === 'steer') out.push(steerBlock(item.itemId, item.content ?? '', item.skippedTools ?? []));
    else if (item.kind === 'refusalRetry') out.push(noteBlock(item)!);
    else if (item.content) out.push({ kind: item.kind, key: `${item.kind}:${counts[item.kind]++}`, text: item.content, streaming: false });
  }
  markLastStreaming(out, streaming);
  return out;
}

function markLastStreaming(blocks: Block[], streaming: boolean): void {
  const last = blocks[blocks.length - 1];
  if (streaming && last && (last.kind === 'text' || last.kind === 'reasoning')) last.streaming = true;
}

/**
 * Matches the run's text items against the final text in order. Between steps the runner may
 * have streamed STEP_SEPARATOR. Returns null when they do not line up.
 */
function reconcile(run: RunView, finalText: string): Block[] | null {
  const out: Block[] = [];
  let cursor = 0;
  let texts = 0;
  for (const item of run.items) {
    if (item.kind === 'toolCall') {
      out.push({ kind: 'tool', key: `tool:${item.itemId}`, tool: toolView(run, item.itemId, streamSegmentFor(run, item.itemId)) });
      continue;
    }
    if (item.kind === 'steer') {
      out.push(steerBlock(item.itemId, item.content ?? '', item.skippedTools ?? []));
      continue;
    }
    if (item.kind === 'refusalRetry') {
      out.push(noteBlock(item)!);
      continue;
    }
    if (item.kind !== 'text') continue; // reasoning items come from the stream, placed below
    const content = item.content ?? '';
    let at = cursor;
    if (!finalText.startsWith(content, at) && finalText.startsWith(STEP_SEPARATOR, at) && finalText.startsWith(content, at + STEP_SEPARATOR.length)) {
      at += STEP_SEPARATOR.length;
    }
    if (!finalText.startsWith(content, at)) return null;
    if (content.length > 0) out.push({ kind: 'text', key: `text:${texts++}`, text: content, streaming: false });
    cursor = at + content.length;
  }
  const rest = finalText.slice(cursor);
  if (rest.trim().length > 0) out.push({ kind: 'text', key: `text:${texts}`, text: rest, streaming: false });
  return out;
}

/** Puts the streamed reasoning back where it streamed: after the same number of tool calls. */
function withReasoning(run: RunView, blocks: Block[]): Block[] {
  const groups = new Map<number, Block[]>();
  let n = 0;
  for (const seg of run.stream) {
    if (seg.kind !== 'reasoning') continue;
    const group = groups.get(seg.toolsBefore) ?? [];
    group.push({ kind: 'reasoning', key: `reasoning:${n++}`, text: seg.text, streaming: false });
    groups.set(seg.toolsBefore, group);
  }
  if (groups.size === 0) return blocks;
  const out: Block[] = [...(groups.get(0) ?? [])];
  let tools = 0;
  for (const b of blocks) {
    out.push(b);
    if (b.kind === 'tool') out.push(...(groups.get(++tools) ?? []));
  }
  for (const [k, g] of groups) if (k > tools) out.push(...g);
  return out;
}

export function runBlocks(run: RunView): Block[] {
  if (!run.final) return liveBlocks(run);
  const matched = reconcile(run, run.final.content);
  if (matched) return withReasoning(run, matched);
  const tools: Block[] = run.items.flatMap((i): Block[] => {
    if (i.kind === 'toolCall') return [{ kind: 'tool', key: `tool:${i.itemId}`, tool: toolView(run, i.itemId, streamSegmentFor(run, i.itemId)) }];
    if (i.kind === 'refusalRetry') return [noteBlock(i)!];
    return i.kind === 'steer' ? [steerBlock(i.itemId, i.content ?? '', i.skippedTools ?? [])] : [];
  });
  if (run.final.content.length > 0) tools.push({ kind: 'text', key: 'text:final', text: run.final.content, streaming: false });
  return withReasoning(run, tools);
}

/** Concatenated visible text of a run (tests and find use it). */
export function runText(run: RunView): string {
  return runBlocks(run)
    .filter((b) => b.kind === 'text')
    .map((b) => (b as { text: string }).text)
    .join('');
}
