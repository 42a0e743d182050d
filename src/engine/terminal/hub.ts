/**
 * CommandOutputHub (SPEC 2.2): one terminal-normalised stream per running command, keyed by an id
 * the caller chooses (the tool call's id), that views subscribe to while the command runs.
 *
 * A stream feeds every chunk (string or bytes, cut anywhere) to a TerminalNormalizer that keeps
 * both renderings: plain text for the model and the transcript (TERMINAL_OUTPUT_TAIL_CHARS
 * characters) and styled text for views (MAX_BYTES_PER_STREAM bytes of UTF-8). A subscriber gets,
 * after each chunk that changed what it shows, an update shaped for cheap re-rendering: the lines
 * that froze into scrollback since the last update (append-only, sent once) and the live region
 * from its first changed line on — a progress bar redraw is one short line. `applyUpdate` is the
 * reference for applying them. `end` gives the final texts to persist and tells subscribers.
 *
 * Bounds: at most MAX_LIVE_COMMANDS streams (least recently active first out, ended ones before
 * running ones; an evicted stream's subscribers are told); per stream, scrollback and final texts
 * within the limits above, and LIVE_LINES live rows.
 */
import { TerminalNormalizer, TERMINAL_OUTPUT_TAIL_CHARS, type TerminalColors } from './normalize';
import { applyUpdate, emptyView, type CommandOutputUpdate, type CommandOutputView } from '../../protocol/terminal';

export { applyUpdate, emptyView, type CommandOutputUpdate, type CommandOutputView };

/** Streams kept at once (running or ended and not yet released); one more evicts the least recently active. */
export const MAX_LIVE_COMMANDS = 64;
/** UTF-8 bytes of coloured text a stream keeps and hands out to persist; its plain text, within TERMINAL_OUTPUT_TAIL_CHARS characters, is smaller still. */
export const MAX_BYTES_PER_STREAM = 262_144;

/** What a subscriber receives. Apply updates in order (`applyUpdate`); `seq` counts them per subscription. */
export type CommandOutputEvent =
  | ({ type: 'update' } & CommandOutputUpdate)
  | { type: 'ended'; commandId: string; seq: number; text: string; exitCode: number | null }
  | { type: 'evicted'; commandId: string; seq: number };

/** What `end` hands back to persist and to give the model. */
export interface CommandOutputResult {
  commandId: string;
  /** Normalised plain text, within TERMINAL_OUTPUT_TAIL_CHARS characters (a note first if anything was cut). */
  text: string;
  /** The same with normalised SGR colours (styles.ts), within MAX_BYTES_PER_STREAM bytes. */
  styledText: string;
  exitCode: number | null;
  /** Input taken: bytes for byte chunks, UTF-16 code units for strings. */
  received: number;
}

interface Subscriber {
  listener: (event: CommandOutputEvent) => void;
  colors: TerminalColors;
  seq: number;
  sentTotal: number;
  sentFirst: number;
  lastLive: string[];
}

interface Stream {
  id: string;
  normalizer: TerminalNormalizer | null;
  result: CommandOutputResult | null;
  subscribers: Set<Subscriber>;
}

export interface CommandOutputHubOptions {
  maxLiveCommands?: number;
  maxBytesPerStream?: number;
  tailChars?: number;
  /** Screen size (tests). */
  rows?: number;
  cols?: number;
}

function deliver(sub: Subscriber, event: CommandOutputEvent): void {
  try {
    sub.listener(event);
  } catch {
    // A subscriber's failure is its own: the command and the other views go on.
  }
}

export class CommandOutputHub {
  private readonly streams = new Map<string, Stream>();
  private readonly maxLive: number;
  private readonly maxBytes: number;
  private readonly tailChars: number;

  constructor(private readonly options: CommandOutputHubOptions = {}) {
    this.maxLive = Math.max(1, options.maxLiveCommands ?? MAX_LIVE_COMMANDS);
    this.maxBytes = options.maxBytesPerStream ?? MAX_BYTES_PER_STREAM;
    this.tailChars = options.tailChars ?? TERMINAL_OUTPUT_TAIL_CHARS;
  }

  get size(): number {
    return this.streams.size;
  }

  has(commandId: string): boolean {
    return this.streams.has(commandId);
  }

  isRunning(commandId: string): boolean {
    return this.streams.get(commandId)?.normalizer != null;
  }

  /** Opens the stream of a command that starts (a stream of the same id is replaced: its subscribers are told `evicted`). */
  start(commandId: string): void {
    const old = this.streams.get(commandId);
    if (old !== undefined) this.evict(old);
    while (this.streams.size >= this.maxLive) this.evictOne();
    this.streams.set(commandId, {
      id: commandId,
      normalizer: new TerminalNormalizer({
        render: 'both',
        plainLimit: this.tailChars,
        styledLimit: { limit: this.maxBytes, measure: 'bytes' },
        rows: this.options.rows,
        cols: this.options.cols,
      }),
      result: null,
      subscribers: new Set(),
    });
  }

  /** Feeds output of a running command; false when the hub has no running stream of that id. */
  append(commandId: string, chunk: string | Uint8Array): boolean {
    const stream = this.touch(commandId);
    if (stream?.normalizer == null) return false;
    stream.normalizer.write(chunk);
    for (const sub of stream.subscribers) {
      const update = this.updateFor(stream, sub, false);
      if (update !== null) deliver(sub, update);
    }
    return true;
  }

  /** The command ended: its final texts (undefined when unknown or already ended). Subscribers get the last update and `ended`. */
  end(commandId: string, exitCode: number | null = null): CommandOutputResult | undefined {
    const stream = this.touch(commandId);
    const n = stream?.normalizer;
    if (stream === undefined || n == null) return undefined;
    n.end();
    const result: CommandOutputResult = { commandId, text: n.text('strip'), styledText: n.text('keep'), exitCode, received: n.received };
    for (const sub of stream.subscribers) {
      const update = this.updateFor(stream, sub, false);
      if (update !== null) deliver(sub, update);
      deliver(sub, { type: 'ended', commandId, seq: ++sub.seq, text: sub.colors === 'keep' ? result.styledText : result.text, exitCode });
    }
    stream.normalizer = null;
    stream.result = result;
    return result;
  }

  /** The current text of a stream (running or ended). */
  text(commandId: string, colors: TerminalColors = 'strip'): string | undefined {
    const stream = this.streams.get(commandId);
    if (stream === undefined) return undefined;
    if (stream.normalizer !== null) return stream.normalizer.text(colors);
    return colors === 'keep' ? stream.result!.styledText : stream.result!.text;
  }

  /**
   * Subscribes to a stream: the first update (reset) carries everything kept, then one per change;
   * an ended stream answers with its final text at once. Returns the unsubscribe function, or
   * undefined when there is no such stream.
   */
  subscribe(commandId: string, listener: (event: CommandOutputEvent) => void, options: { colors?: TerminalColors } = {}): (() => void) | undefined {
    const stream = this.touch(commandId);
    if (stream === undefined) return undefined;
    const sub: Subscriber = { listener, colors: options.colors ?? 'keep', seq: 0, sentTotal: 0, sentFirst: 0, lastLive: [] };
    if (stream.normalizer === null) {
      const r = stream.result!;
      const text = sub.colors === 'keep' ? r.styledText : r.text;
      deliver(sub, { type: 'update', commandId, seq: ++sub.seq, reset: true, firstFrozen: 0, frozenFrom: 0, frozen: [], shift: 0, liveFrom: 0, live: text === '' ? [] : text.split('\n') });
      deliver(sub, { type: 'ended', commandId, seq: ++sub.seq, text, exitCode: r.exitCode });
      return () => undefined;
    }
    stream.subscribers.add(sub);
    deliver(sub, this.updateFor(stream, sub, true)!);
    return () => {
      stream.subscribers.delete(sub);
    };
  }

  /** Forgets a stream (running or ended); its subscribers are not told. */
  release(commandId: string): void {
    this.streams.delete(commandId);
  }

  private touch(commandId: string): Stream | undefined {
    const stream = this.streams.get(commandId);
    if (stream !== undefined) {
      // Map order is the LRU order: the most recently active stream goes last.
      this.streams.delete(commandId);
      this.streams.set(commandId, stream);
    }
    return stream;
  }

  private evictOne(): void {
    let victim: Stream | undefined;
    for (const s of this.streams.values()) {
      if (s.normalizer === null) {
        victim = s;
        break;
      }
      victim ??= s;
    }
    if (victim !== undefined) this.evict(victim);
  }

  private evict(stream: Stream): void {
    this.streams.delete(stream.id);
    for (const sub of stream.subscribers) deliver(sub, { type: 'evicted', commandId: stream.id, seq: ++sub.seq });
  }

  private updateFor(stream: Stream, sub: Subscriber, reset: boolean): ({ type: 'update' } & CommandOutputUpdate) | null {
    const n = stream.normalizer!;
    const from = reset ? 0 : sub.sentTotal;
    const fr = n.frozen(sub.colors, from);
    const shift = reset ? 0 : fr.total - sub.sentTotal;
    const live = n.liveLines(sub.colors);
    const prev = reset ? [] : sub.lastLive;
    let liveFrom = 0;
    const m = Math.min(prev.length - shift, live.length);
    while (liveFrom < m && prev[shift + liveFrom] === live[liveFrom]) liveFrom++;
    const unchanged = !reset && shift === 0 && fr.first === sub.sentFirst && liveFrom === live.length && live.length === prev.length;
    sub.sentTotal = fr.total;
    sub.sentFirst = fr.first;
    sub.lastLive = live;
    if (unchanged) return null;
    return {
      type: 'update',
      commandId: stream.id,
      seq: ++sub.seq,
      reset,
      firstFrozen: fr.first,
      frozenFrom: Math.max(fr.first, from),
      frozen: fr.lines,
      shift,
      liveFrom,
      live: liveFrom === 0 ? live : live.slice(liveFrom),
    };
  }
}
