/**
 * The live view's side of SPEC 3.2 (false-refusal retry, tool calls written as text): the two
 * chunks that revise text already streamed. `refusalRetry` removes the discarded reply from the
 * run's streamed text and puts the collapsed "retried after a refusal" note in its place;
 * `textRevised` replaces the reply's text by its text without the salvaged calls (which follow
 * as tool calls). Only the step's own text is touched: text segments at the end of the stream,
 * skipping reasoning (it stays), never reaching back past a tool call, a steer or a note.
 * Pure, mutates the run's stream in place like ./thread-state.ts.
 */
import { refusalRetryData, textRevisedData } from '../../../src/protocol/chunks';

/** The note's stream segment (part of ./thread-state.ts's StreamSegment, which imports it from here). */
export interface RefusalSegment { kind: 'refusalRetry'; itemId: string; discarded: string; tools: string[] }
interface TextSegment { kind: 'text'; text: string; toolsBefore: number }
/** Any stream segment, as far as this module looks at it (this module does not import thread-state: no cycle). */
type Segment = { kind: string } | TextSegment | RefusalSegment;
type Warn = (message: string) => void;
interface RunLike { stream: Segment[] }

const isText = (s: Segment): s is TextSegment => s.kind === 'text';

/** Removes `count` characters of text from the end of the stream; false when the stream has fewer in this step. */
function dropTail(stream: Segment[], count: number): boolean {
  let left = count;
  for (let i = stream.length - 1; i >= 0 && left > 0; i--) {
    const seg = stream[i]!;
    if (seg.kind === 'reasoning') continue;
    if (!isText(seg)) break;
    const cut = Math.min(left, seg.text.length);
    seg.text = seg.text.slice(0, seg.text.length - cut);
    left -= cut;
    if (seg.text.length === 0) stream.splice(i, 1);
  }
  return left === 0;
}

function toolsIn(stream: readonly Segment[]): number {
  return stream.filter((s) => s.kind === 'tool').length;
}

function parse<T>(data: string, validate: (v: unknown) => T, warn: Warn, what: string): T | null {
  try {
    return validate(JSON.parse(data));
  } catch (e) {
    warn(`ignoring a broken ${what} chunk: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** A `refusalRetry` chunk: the refusal leaves the streamed text, the note takes its place. */
export function applyRefusalRetryChunk(run: RunLike, data: string, warn: Warn): void {
  const d = parse(data, refusalRetryData, warn, 'refusalRetry');
  if (!d || run.stream.some((s) => s.kind === 'refusalRetry' && (s as RefusalSegment).itemId === d.itemId)) return;
  if (!dropTail(run.stream, d.discarded.length)) warn('a refusalRetry chunk removes more text than its step streamed');
  run.stream.push({ kind: 'refusalRetry', itemId: d.itemId, discarded: d.discarded, tools: d.tools });
}

/** A `textRevised` chunk: the step's streamed text becomes `text` (the salvaged calls follow as tool calls). */
export function applyTextRevisedChunk(run: RunLike, data: string, warn: Warn): void {
  const d = parse(data, textRevisedData, warn, 'textRevised');
  if (!d) return;
  if (!dropTail(run.stream, d.removed)) warn('a textRevised chunk removes more text than its step streamed');
  if (d.text.length === 0) return;
  const last = run.stream[run.stream.length - 1];
  if (last && isText(last)) last.text += d.text;
  else run.stream.push({ kind: 'text', text: d.text, toolsBefore: toolsIn(run.stream) });
}
