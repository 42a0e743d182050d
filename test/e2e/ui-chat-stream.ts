/**
 * The Vox chat as test/e2e/ui-chat.ts sees it: the last run as the webview renders it (polled, or
 * recorded from inside the webview so a short reply is still seen growing), streaming assertions
 * (every text shown mid-stream is a prefix of the final one; byte-for-byte comparisons), the
 * streamed answers it scripts, and the stored messages (SQLite, <home>/.vox/vox.db), read-only.
 */
import * as fs from 'node:fs';
import Database from 'better-sqlite3';
import type { Frame } from 'playwright-core';
import { waitFor } from '../support/wait';
import { assert } from './ui-session';

// ---------------------------------------------------------------------------------------------
// Streamed answers and byte-for-byte comparisons

function snippet(s: string, at = 0, width = 60): string {
  return JSON.stringify(s.slice(Math.max(0, at - width / 2), at + width / 2));
}

/** Throws naming the first differing byte when a and b are not the same UTF-8 bytes. */
export function assertSameBytes(what: string, actual: string, expected: string): void {
  const a = Buffer.from(actual, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  if (a.equals(b)) return;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const ca = Buffer.from(a.subarray(0, i)).toString('utf8').length;
  throw new Error(
    `${what}: ${a.length} vs ${b.length} bytes, first difference at byte ${i}: got ${snippet(actual, ca)}, expected ${snippet(expected, ca)}`,
  );
}

const VOCAB = ['tokens', 'ünïcödé', '日本語', 'emoji 🚀', 'naïve', 'Zürich', 'arrive', 'in', 'order', '—', 'café', 'stream'];

/**
 * A long single-paragraph answer streamed as `n` chunks: words (some non-ASCII, one astral) and
 * single spaces, no markdown syntax, so its rendered text equals the raw text.
 */
export function slowChunks(tag: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`${i === 0 ? `${tag}:` : ''} ${VOCAB[i % VOCAB.length]} w${i + 1}`);
  return out;
}

/** `text` as word chunks (each but the first with its leading space). */
export function words(text: string): string[] {
  return text.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`));
}

/** What the rendered text of `chunks` looks like: markdown trims the paragraph. */
export const rendered = (chunks: string[]): string => chunks.join('').trim();

// ---------------------------------------------------------------------------------------------
// The webview, seen from the page

/** One run (the last `article.run`) as the webview renders it. */
export interface RunSample {
  at: number;
  runs: number;
  /** The assistant text blocks' rendered text, joined. */
  text: string;
  blocks: number;
  /** data-status of the run's footer: running | completed | cancelled | failed | interrupted. */
  status: string | null;
  /** The composer shows Stop (a run is active in this view). */
  stop: boolean;
  title: string;
  userMessages: string[];
}

const RUN_STATE_FN = `() => {
  const runs = document.querySelectorAll('article.run');
  const run = runs[runs.length - 1];
  const blocks = run ? Array.from(run.querySelectorAll('.message.assistant')) : [];
  return {
    runs: runs.length,
    text: blocks.map((b) => b.innerText).join(''),
    blocks: blocks.length,
    status: run ? (run.querySelector('footer.run-status')?.getAttribute('data-status') ?? null) : null,
    stop: !!document.querySelector('vscode-button.stop'),
    title: document.querySelector('h1.title')?.textContent ?? '',
    userMessages: Array.from(document.querySelectorAll('.message.user .plain')).map((e) => e.textContent ?? ''),
  };
}`;
const RUN_STATE_JS = `(${RUN_STATE_FN})()`;

/**
 * Records every rendered state of the last run from inside the webview (a MutationObserver), so
 * a short reply that streams between two polls is still seen growing. Read with READ_RECORDER_JS.
 */
export const START_RECORDER_JS = `(() => {
  const read = ${RUN_STATE_FN};
  const rec = [];
  let last = '';
  window.__voxRecorder?.disconnect();
  const obs = new MutationObserver(() => {
    const s = read();
    const key = s.status + '|' + s.runs + '|' + s.text;
    if (key !== last) { last = key; rec.push({ ...s, at: Date.now() }); }
  });
  obs.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  window.__voxRecorder = obs;
  window.__voxRecorded = rec;
})()`;
export const READ_RECORDER_JS = `(() => { window.__voxRecorder?.disconnect(); return window.__voxRecorded ?? []; })()`;

export async function runState(frame: Frame): Promise<RunSample> {
  const s = (await frame.evaluate(RUN_STATE_JS)) as Omit<RunSample, 'at'>;
  return { ...s, at: Date.now() };
}

/** Samples `frame` every `everyMs` until `done(sample)`; returns every sample (the last satisfied `done`). */
export async function watch(frame: Frame, what: string, timeoutMs: number, done: (s: RunSample) => boolean, everyMs = 50): Promise<RunSample[]> {
  const samples: RunSample[] = [];
  const detail = (): string => {
    const s = samples[samples.length - 1];
    return s ? `last: status=${s.status} runs=${s.runs} text=${snippet(s.text, s.text.length, 80)}` : 'no sample';
  };
  await waitFor(what, timeoutMs, async () => {
    const s = await runState(frame);
    samples.push(s);
    return done(s);
  }, { everyMs, failFast: true, detail });
  return samples;
}

/** Texts seen while the run was running, distinct, in order. */
export function growth(samples: RunSample[]): string[] {
  const out: string[] = [];
  for (const s of samples) if (s.status === 'running' && s.text.length > 0 && s.text !== out[out.length - 1]) out.push(s.text);
  return out;
}

/** Every text shown while running is a prefix of the final text, and never shrinks. */
export function assertStreamedPrefixes(what: string, samples: RunSample[], final: string): void {
  let last = '';
  for (const t of growth(samples)) {
    if (!final.startsWith(t)) throw new Error(`${what}: text shown mid-stream is not a prefix of the final text (duplicated or lost tokens?): ${snippet(t, t.length, 80)}`);
    if (t.length < last.length) throw new Error(`${what}: text shrank mid-stream from ${last.length} to ${t.length} characters`);
    last = t;
  }
}

// ---------------------------------------------------------------------------------------------
// The stored messages (SQLite, <home>/.vox/vox.db), read-only

export interface StoredMessage { threadId: string; content: string; status: string }

export function readStoredAnswer(dbFile: string, threadTitle: string): StoredMessage {
  assert(fs.existsSync(dbFile), `no store at ${dbFile}`);
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const thread = db.prepare('SELECT id FROM threads WHERE title = ? AND deleted = 0 ORDER BY created_at DESC LIMIT 1').get(threadTitle) as { id: string } | undefined;
    assert(thread, `no thread titled ${JSON.stringify(threadTitle)} in ${dbFile}`);
    const msg = db
      .prepare("SELECT content, status FROM messages WHERE thread_id = ? AND role = 'assistant' ORDER BY created_at DESC, rowid DESC LIMIT 1")
      .get(thread.id) as { content: string; status: string } | undefined;
    assert(msg, `thread ${thread.id} has no assistant message`);
    return { threadId: thread.id, content: msg.content, status: msg.status };
  } finally {
    db.close();
  }
}

/** The text chunks the engine has stored (turn_chunks) for the last run of a thread, joined. */
export function readStoredStream(dbFile: string, threadTitle: string): string {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const run = db
      .prepare('SELECT r.id FROM runs r JOIN threads t ON t.id = r.thread_id WHERE t.title = ? AND t.deleted = 0 ORDER BY t.created_at DESC, r.ordinal DESC LIMIT 1')
      .get(threadTitle) as { id: string } | undefined;
    assert(run, `no run in a thread titled ${JSON.stringify(threadTitle)}`);
    const rows = db.prepare("SELECT data FROM turn_chunks WHERE turn_id = ? AND kind = 'text' ORDER BY seq").all(run.id) as { data: string }[];
    return rows.map((r) => r.data).join('');
  } finally {
    db.close();
  }
}
