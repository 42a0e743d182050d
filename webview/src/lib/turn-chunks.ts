/**
 * The live stream of a thread's runs: `turnChunks` batches folded into each run's stream
 * segments (text, reasoning, tool calls and results, command output, steers, salvage notes),
 * exactly once by chunk seq, and the end of a turn's stream. Pure, like the rest of the thread
 * state (./thread-state.ts re-exports these); chunks of kinds this build does not know are skipped.
 */
import { applyUpdate, emptyView } from '../../../src/protocol/terminal';
import { commandOutputData, steerData, toolCallData, toolResultData, type ChunkKind, type WireChunk } from '../../../src/protocol/chunks';
import { applyRefusalRetryChunk, applyTextRevisedChunk } from './salvage-state';
import type { RunView, StreamSegment, ToolResultView } from './run-views';
import type { ThreadState } from './thread-model';

export type TurnEndStatus = 'completed' | 'cancelled' | 'failed' | 'interrupted';
export type Warn = (message: string) => void;

const noWarn: Warn = () => {};

function toolsIn(stream: readonly StreamSegment[]): number {
  let n = 0;
  for (const s of stream) if (s.kind === 'tool') n++;
  return n;
}

/**
 * Applies one `turnChunks` batch to the run `turnId`. Returns false when the run is unknown to
 * this thread (the chunks are then dropped: the caller never subscribed to such a turn).
 */
export function applyChunks(state: ThreadState, turnId: string, chunks: readonly WireChunk[], warn: Warn = noWarn): boolean {
  const run = state.runs[turnId];
  if (!run) return false;
  for (const chunk of chunks) {
    if (chunk.seq <= run.lastChunkSeq) continue; // duplicate from a replay overlap
    run.lastChunkSeq = chunk.seq;
    applyChunk(run, chunk, warn);
  }
  return true;
}

function applyChunk(run: RunView, chunk: WireChunk, warn: Warn): void {
  const last = run.stream[run.stream.length - 1];
  const kind = chunk.kind as ChunkKind;
  switch (kind) {
    case 'text':
    case 'reasoning':
      if (chunk.data.length === 0) return;
      if (last && last.kind === kind) last.text += chunk.data;
      else run.stream.push({ kind, text: chunk.data, toolsBefore: toolsIn(run.stream) });
      return;
    case 'toolCall': {
      const call = parseJson(chunk.data, toolCallData, warn, 'toolCall');
      if (!call) return;
      const existing = run.stream.find((s) => s.kind === 'tool' && s.itemId === call.itemId);
      if (existing) return;
      run.stream.push({ kind: 'tool', itemId: call.itemId, callId: call.callId, name: call.name, arguments: call.arguments, result: null, ...(call.permission ? { permission: call.permission } : {}) });
      return;
    }
    case 'toolResult': {
      const res = parseJson(chunk.data, toolResultData, warn, 'toolResult');
      if (!res) return;
      const view: ToolResultView = { status: res.status, content: res.content, changedPaths: res.changedPaths ?? [], ...(res.app ? { app: res.app } : {}) };
      const seg = run.stream.find((s) => s.kind === 'tool' && s.itemId === res.itemId);
      if (seg && seg.kind === 'tool') seg.result = view;
      else run.stream.push({ kind: 'tool', itemId: res.itemId, callId: res.callId ?? res.itemId, name: '', arguments: '', result: view });
      return;
    }
    case 'status':
      run.statusText = chunk.data.length > 0 ? chunk.data : null;
      return;
    case 'commandOutput': {
      const out = parseJson(chunk.data, commandOutputData, warn, 'commandOutput');
      const seg = out && run.stream.find((s) => s.kind === 'tool' && s.itemId === out.itemId);
      if (out && seg && seg.kind === 'tool') seg.output = applyUpdate(seg.output ?? emptyView(), out.update);
      return;
    }
    case 'steer': {
      const steer = parseJson(chunk.data, steerData, warn, 'steer');
      if (!steer || run.stream.some((s) => s.kind === 'steer' && s.itemId === steer.itemId)) return;
      run.stream.push({ kind: 'steer', itemId: steer.itemId, prompt: steer.prompt, skippedTools: steer.skippedTools });
      return;
    }
    case 'refusalRetry':
      applyRefusalRetryChunk(run, chunk.data, warn);
      return;
    case 'textRevised':
      applyTextRevisedChunk(run, chunk.data, warn);
      return;
    default:
      return; // unknown kind from a newer engine: its seq still counts as seen
  }
}

function parseJson<T>(data: string, validate: (v: unknown) => T, warn: Warn, what: string): T | null {
  try {
    return validate(JSON.parse(data));
  } catch (e) {
    warn(`ignoring a broken ${what} chunk: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** Records a `turnEnded` update. The run's own status still comes from its `run.ended` event. */
export function applyTurnEnded(state: ThreadState, turnId: string, status: TurnEndStatus, error?: string): boolean {
  const run = state.runs[turnId];
  if (!run) return false;
  run.streamEnded = true;
  if (run.status === 'running') {
    run.status = status;
    if (error !== undefined) run.error = error;
  }
  return true;
}

/** The engine refused to stream this turn; the view falls back to the run's events. */
export function markStreamUnavailable(state: ThreadState, turnId: string): void {
  const run = state.runs[turnId];
  if (run) run.streamUnavailable = true;
}
