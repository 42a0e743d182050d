/**
 * A synthetic long thread as the engine stores it (events with seqs): `messages` messages, half
 * user prompts and half assistant answers (each answer closes a run), with realistic content —
 * markdown paragraphs, lists, fenced code blocks, and every fifth run a tool call with its
 * result. Deterministic: the same arguments give the same events. Used by the long-thread
 * browser tests and bench/long-thread.ts. `variant` changes the wording and ids (another
 * branch's messages); `firstSeq` and `fromPair` let a tail be appended after a shared prefix.
 */

export interface LongThreadOptions {
  threadId: string;
  /** Messages (user + assistant); entries in the list = messages (a user message and a run per pair). */
  messages: number;
  /** Distinguishes branches: ids and wording differ per variant. */
  variant?: string;
  /** The first event's seq (default 1). */
  firstSeq?: number;
  /** The index of the first pair (default 0), for tails after a shared prefix. */
  fromPair?: number;
  /** Emit thread.created first (default true when fromPair is 0). */
  created?: boolean;
}

const WORDS = ['the', 'parser', 'returns', 'a', 'token', 'stream', 'and', 'each', 'node', 'keeps', 'its', 'span', 'so', 'errors', 'point', 'at', 'source', 'lines', 'when', 'tests', 'fail', 'we', 'check', 'cache', 'branch', 'render', 'state', 'value', 'function', 'module'];

function words(n: number, salt: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[(i * 7 + salt * 13 + ((salt >> 3) % 5)) % WORDS.length]!);
  return out.join(' ');
}

function userPrompt(i: number, variant: string): string {
  const extra = i % 4 === 0 ? `\n\nAlso look at \`src/mod${i % 17}.ts\` line ${i % 90}.` : '';
  return `Question ${i}${variant ? ` (${variant})` : ''}: why does ${words(8 + (i % 12), i)}?${extra}`;
}

function answer(i: number, variant: string): string {
  const para = (k: number) => `${words(25 + ((i + k) % 30), i + k)}.`;
  const parts = [`Answer ${i}${variant ? ` (${variant})` : ''}: ${para(0)}`, para(1)];
  if (i % 2 === 0) parts.push(`- ${words(6, i + 2)}\n- ${words(7, i + 3)}\n- **${words(3, i + 4)}** ${words(5, i + 5)}`);
  if (i % 3 === 0) {
    parts.push(['```ts', `export function step${i}(input: string): number {`, `  const parts = input.split(',');`, `  return parts.length * ${i % 10};`, '}', '```'].join('\n'));
  }
  parts.push(para(2));
  return parts.join('\n\n');
}

/** The stored events of the thread (or of its tail from `fromPair`). */
export function longThreadEvents(opts: LongThreadOptions): Record<string, unknown>[] {
  const { threadId, messages } = opts;
  const variant = opts.variant ?? '';
  const fromPair = opts.fromPair ?? 0;
  let seq = (opts.firstSeq ?? 1) - 1;
  const time = 1_700_000_000_000;
  const out: Record<string, unknown>[] = [];
  const ev = (e: Record<string, unknown>) => out.push({ seq: ++seq, time: time + seq, threadId, ...e });
  if (opts.created ?? fromPair === 0) ev({ type: 'thread.created', title: `Long thread ${threadId}` });
  const pairs = Math.floor(messages / 2);
  const v = variant ? `${variant}-` : '';
  let parent: string | null = fromPair > 0 ? `m:${v}a${fromPair - 1}` : null;
  for (let p = fromPair; p < fromPair + pairs; p++) {
    const u = `m:${v}u${p}`;
    const runId = `run:${v}${p}`;
    ev({ type: 'message.added', messageId: u, parentId: parent, role: 'user', content: userPrompt(p, variant), runId: null, status: 'complete' });
    ev({ type: 'run.started', runId, ordinal: p, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: u });
    if (p % 5 === 0) {
      const itemId = `item:${v}${p}`;
      ev({ type: 'item.started', runId, itemId, ordinal: 1, kind: 'toolCall', toolName: 'read_file', arguments: JSON.stringify({ path: `src/mod${p % 17}.ts` }) });
      ev({ type: 'item.completed', runId, itemId, status: 'completed', content: `export const value${p} = ${p};\n`.repeat(3), isError: false });
    }
    const a = `m:${v}a${p}`;
    ev({ type: 'message.added', messageId: a, parentId: u, role: 'assistant', content: answer(p, variant), runId, status: 'complete' });
    ev({ type: 'run.ended', runId, status: 'completed', error: null, usage: { inputTokens: 100 + p, outputTokens: 50 + p } });
    parent = a;
  }
  return out;
}

/** The list keys of a thread's entries, in order (as MessageList keys them). */
export function longThreadKeys(messages: number, variant = '', fromPair = 0): string[] {
  const v = variant ? `${variant}-` : '';
  const keys: string[] = [];
  for (let p = fromPair; p < fromPair + Math.floor(messages / 2); p++) keys.push(`msg:m:${v}u${p}`, `run:run:${v}${p}`);
  return keys;
}
