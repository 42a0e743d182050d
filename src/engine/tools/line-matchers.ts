/**
 * How `search_text` tests lines, so that no query can freeze the process. Owns the three matchers:
 * - `substring`: plain text, on the main thread (`includes` is linear; files are at most
 *   SEARCH_MAX_FILE_BYTES, and the walk yields between files, so Stop is seen between files);
 * - `ripgrep`: a regular expression in ripgrep's linear-time engine. rg reads the texts Vox read
 *   itself on its stdin (`rg … -`, never a path), in batches (one process each, started off this
 *   thread), and its line numbers are mapped back to files; a pattern rg refuses (look-around,
 *   backreferences, `\/`…) falls back to:
 * - `javascript`: the JavaScript RegExp in a worker thread, at most REGEX_FILE_TIME_BUDGET_MS per
 *   file: a catastrophic pattern is stopped (the worker terminated) with a `timeout` ToolError,
 *   and abort terminates it at once (`cancelled`).
 * Every matcher reports hits through a sink that returns false once it wants no more.
 */
import { Worker } from 'node:worker_threads';
import { RipgrepError, ripgrepComplaint, runRipgrep } from './ripgrep';
import { ToolError } from './types';

/** Longest a JavaScript regular expression may run over one file before the search is stopped. */
export const REGEX_FILE_TIME_BUDGET_MS = 2_000;
/** Characters of text sent to one rg process (a larger batch costs fewer processes, a smaller one stops sooner). */
const RIPGREP_BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes rg adds to an output line: its number (up to 20 digits) and the colon. */
const RIPGREP_LINE_NUMBER_BYTES = 21;

/** Receives one matching line (1-based number, text without its line ending); false = stop. */
export type LineSink = (rel: string, lineNo: number, line: string) => boolean;

export interface LineMatcher {
  readonly engine: 'substring' | 'ripgrep' | 'javascript';
  /** Tests the lines of one file; hits may arrive through the sink later (ripgrep), but in order. */
  feed(rel: string, text: string): Promise<void>;
  /** No more files: resolves when every hit has been reported. */
  end(): Promise<void>;
  /** Stops any process or thread. Idempotent. */
  dispose(): Promise<void>;
}

export interface MatcherOptions {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  signal: AbortSignal;
  sink: LineSink;
  ripgrepPath?: string;
  /** Where rg runs (the workspace root; it reads only stdin). */
  cwd: string;
}

const cancelled = (): ToolError => new ToolError('cancelled', 'search_text was cancelled.');

/** Lines of `text` without their endings; a final newline does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

function substringMatcher(o: MatcherOptions): LineMatcher {
  const needle = o.caseSensitive ? o.query : o.query.toLowerCase();
  let stopped = false;
  return {
    engine: 'substring',
    async feed(rel, text) {
      if (stopped) return;
      const lines = splitLines(text);
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if ((o.caseSensitive ? line : line.toLowerCase()).includes(needle) && !o.sink(rel, i + 1, line)) {
          stopped = true;
          return;
        }
      }
    },
    end: async () => undefined,
    dispose: async () => undefined,
  };
}

/**
 * The worker's program. It splits lines exactly as `splitLines` does (kept in step by hand: the
 * worker is evaluated from this string, so it works the same from tsx and from the bundle).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (text) => {
  const lines = text === '' ? [] : text.split('\\n');
  if (text.endsWith('\\n')) lines.pop();
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (re.test(line)) hits.push(i);
  }
  parentPort.postMessage(hits);
});
`;

function javascriptMatcher(o: MatcherOptions, why: string): LineMatcher {
  let worker: Worker | undefined;
  let stopped = false;
  const dispose = async (): Promise<void> => {
    const w = worker;
    worker = undefined;
    await w?.terminate();
  };
  return {
    engine: 'javascript',
    async feed(rel, text) {
      if (stopped) return;
      if (o.signal.aborted) throw cancelled();
      worker ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { source: o.query, flags: o.caseSensitive ? '' : 'i' } });
      const w = worker;
      const hits = await new Promise<number[]>((resolve, reject) => {
        const finish = (err?: ToolError, value?: number[]): void => {
          clearTimeout(timer);
          o.signal.removeEventListener('abort', onAbort);
          w.off('message', onMessage);
          w.off('error', onError);
          if (err) {
            void dispose();
            reject(err);
          } else resolve(value!);
        };
        const onMessage = (v: number[]): void => finish(undefined, v);
        const onError = (e: Error): void => finish(new ToolError('io', `The regular expression failed on ${rel}: ${e.message}`));
        const onAbort = (): void => finish(cancelled());
        const timer = setTimeout(() => {
          finish(
            new ToolError(
              'timeout',
              `The regular expression ${JSON.stringify(o.query)} ran for more than ${REGEX_FILE_TIME_BUDGET_MS} ms on ${rel} and was stopped: ` +
                `it probably backtracks catastrophically (nested quantifiers such as (a+)+). Simplify it, or search for plain text. ` +
                `(It ran in JavaScript under a time limit because ${why}.)`,
            ),
          );
        }, REGEX_FILE_TIME_BUDGET_MS);
        w.on('message', onMessage);
        w.on('error', onError);
        o.signal.addEventListener('abort', onAbort, { once: true });
        w.postMessage(text);
      });
      const lines = hits.length > 0 ? splitLines(text) : [];
      for (const i of hits) {
        if (!o.sink(rel, i + 1, lines[i]!)) {
          stopped = true;
          return;
        }
      }
    },
    end: async () => undefined,
    dispose,
  };
}

/** Whether rg compiles the pattern in `args` (exit 1 on empty input); its complaint when it does not. */
async function ripgrepRefusal(rgPath: string, args: string[], o: MatcherOptions): Promise<string | undefined> {
  const r = await runRipgrep(rgPath, [...args, '-'], { cwd: o.cwd, signal: o.signal, maxBuffer: RIPGREP_BATCH_BYTES });
  return r.code === 2 ? ripgrepComplaint(r.stderr) : undefined;
}

interface FedFile {
  rel: string;
  /** The batch's line number of the file's first line (1-based). */
  first: number;
  lines: number;
}

/** Texts go to rg in batches of about RIPGREP_BATCH_BYTES on stdin; each hit `N:line` is mapped back to its file. */
function ripgrepMatcher(rgPath: string, args: string[], o: MatcherOptions): LineMatcher {
  const rgArgs = [...args, '--line-number', '--no-filename', '-'];
  let files: FedFile[] = [];
  let chunks: string[] = [];
  let bytes = 0;
  let lines = 0;
  let stopped = false;

  async function flush(): Promise<void> {
    if (files.length === 0 || stopped) return;
    const batch = files;
    const input = Buffer.from(chunks.join(''), 'utf8');
    // Every output line is an input line plus its number and a colon: this cap is never reached.
    const maxBuffer = input.length + lines * RIPGREP_LINE_NUMBER_BYTES;
    files = [];
    chunks = [];
    bytes = 0;
    lines = 0;
    let r;
    try {
      r = await runRipgrep(rgPath, rgArgs, { cwd: o.cwd, signal: o.signal, input, maxBuffer });
    } catch (e) {
      if (e instanceof RipgrepError) throw new ToolError('io', `ripgrep could not run: ${e.message}`);
      throw e;
    }
    if (r.timedOut) throw new ToolError('timeout', 'ripgrep took too long; narrow the path.');
    if (r.code === 2 || r.overflow) throw new ToolError('io', `ripgrep failed: ${ripgrepComplaint(r.stderr)}`);
    let head = 0;
    for (const record of splitLines(r.stdout)) {
      const colon = record.indexOf(':');
      const n = Number(record.slice(0, colon));
      while (head < batch.length && n >= batch[head]!.first + batch[head]!.lines) head++;
      const f = batch[head];
      if (f === undefined || colon < 0) continue;
      if (!o.sink(f.rel, n - f.first + 1, record.slice(colon + 1))) {
        stopped = true;
        return;
      }
    }
  }

  return {
    engine: 'ripgrep',
    async feed(rel, text) {
      if (stopped) return;
      if (o.signal.aborted) throw cancelled();
      const count = splitLines(text).length;
      if (count === 0) return;
      files.push({ rel, first: lines + 1, lines: count });
      lines += count;
      const chunk = text.endsWith('\n') ? text : `${text}\n`;
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= RIPGREP_BATCH_BYTES) await flush();
    },
    end: flush,
    dispose: async () => {
      stopped = true;
    },
  };
}

/**
 * The matcher for a query: substring for plain text; for a regular expression ripgrep when given
 * and it accepts the pattern, otherwise JavaScript under the time budget. `notes` gets a line when
 * rg could not run.
 */
export async function createLineMatcher(o: MatcherOptions, notes: string[]): Promise<LineMatcher> {
  if (!o.regex) return substringMatcher(o);
  if (!o.ripgrepPath) return javascriptMatcher(o, 'ripgrep is not available');
  const args = ['--text', '--crlf', o.caseSensitive ? '--case-sensitive' : '--ignore-case', '--regexp', o.query];
  try {
    const refusal = await ripgrepRefusal(o.ripgrepPath, args, o);
    if (refusal !== undefined) return javascriptMatcher(o, `ripgrep does not support it (${refusal})`);
  } catch (e) {
    if (!(e instanceof RipgrepError)) throw e;
    notes.push(`[search_text: ripgrep could not run (${e.message}); the regular expression ran in JavaScript under a time limit]`);
    return javascriptMatcher(o, 'ripgrep could not run');
  }
  return ripgrepMatcher(o.ripgrepPath, args, o);
}
