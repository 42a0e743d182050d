/**
 * Chaos harness for TurnStreamRegistry tests: a seeded producer streams random chunks (multi-byte,
 * astral, surrogate pairs split across chunks) while clients join, leave and rejoin with their last
 * seq at random points — from the event loop, from microtasks, and from inside other clients'
 * deliveries. It records every violation it sees; the test asserts on the result.
 */
import {
  TurnStreamRegistry, type ChunkKind, type TurnChunk, type TurnEnd, type TurnStreamRegistryOptions, type Subscription,
} from '../../src/engine/stream/turn-stream-registry';
import { seededRandom } from './random';

/** Event-loop turns the chaos loop may take before giving up: a broken registry fails, never hangs. */
export const MAX_SPINS = 500_000;
/** Clients in one chaos run; client 0 is held back until the turn has ended (the late joiner). */
const CHAOS_CLIENTS = 12;

export interface ChaosResult {
  script: Array<{ kind: ChunkKind; data: string }>;
  clients: ChaosClient[];
  violations: string[];
  spins: number;
  reentrantJoins: number;
  persisted: number;
  accumulated: { text: string; reasoning: string; lastSeq: number } | undefined;
}

const PIECES = ['a', 'b', 'e', 'o', 't', ' ', ' ', '\n', '{', '"', 'é', 'ß', 'Ж', '中', '文', '€', '😀', '🎉', '𝄞', '👩‍💻', '\u0301'];
const KINDS: Array<[ChunkKind, number]> = [['text', 0.8], ['reasoning', 0.1], ['toolCall', 0.04], ['toolResult', 0.04], ['status', 0.02]];

/** Builds `count` chunks of random kinds and sizes; some astral characters are split across two chunks. */
export function makeScript(rand: () => number, count: number): Array<{ kind: ChunkKind; data: string }> {
  const out: Array<{ kind: ChunkKind; data: string }> = [];
  const carry = new Map<ChunkKind, string>();
  for (let i = 0; i < count; i++) {
    let r = rand();
    let kind: ChunkKind = 'text';
    for (const [k, p] of KINDS) if ((r -= p) < 0) { kind = k; break; }
    let data = carry.get(kind) ?? '';
    carry.delete(kind);
    const len = Math.floor(rand() * rand() * 40); // skewed towards short, token-like chunks
    for (let j = 0; j < len; j++) data += PIECES[Math.floor(rand() * PIECES.length)]!;
    const last = data.charCodeAt(data.length - 1);
    if (i < count - 1 && last >= 0xdc00 && last <= 0xdfff && rand() < 0.5) {
      carry.set(kind, data.slice(-1)); // leave a lone high surrogate at the end of this chunk
      data = data.slice(0, -1);
    }
    out.push({ kind, data });
  }
  for (const [kind, data] of carry) out.push({ kind, data });
  return out;
}

const tick = (rand: () => number): Promise<void> =>
  rand() < 0.5 ? new Promise((r) => setImmediate(r)) : Promise.resolve().then(() => undefined);

export interface ChaosClient {
  id: number;
  lastSeq: number;
  received: TurnChunk[];
  sub: Subscription | null;
  session: number;
  ended: TurnEnd | null;
  joins: number;
  midStreamJoins: number;
}

export async function runChaos(seed: number, count: number, opts: TurnStreamRegistryOptions & { store?: boolean }): Promise<ChaosResult> {
  const rand = seededRandom(seed);
  const script = makeScript(rand, count);
  const turnId = 'turn:hard';
  const violations: string[] = [];
  const clients: ChaosClient[] = Array.from({ length: CHAOS_CLIENTS }, (_, id) => ({
    id, lastSeq: 0, received: [], sub: null, session: 0, ended: null, joins: 0, midStreamJoins: 0,
  }));
  const store: TurnChunk[] = [];
  let persisted = 0;
  const reg = new TurnStreamRegistry({
    ...opts,
    persist: opts.store
      ? (c) => {
          if (c.seq !== store.length + 1) violations.push(`persisted seq ${c.seq} after ${store.length}`);
          for (const cl of clients) if (cl.lastSeq >= c.seq) violations.push(`client ${cl.id} saw ${c.seq} before persist`);
          store.push(c);
          persisted++;
        }
      : undefined,
    loadAfter: opts.store ? (_t, after) => store.slice(after) : undefined,
    onSubscriberError: (e) => violations.push(`subscriber threw: ${String(e)}`),
  });
  reg.open(turnId);
  let reentrantJoins = 0;

  const accept = (cl: ChaosClient, c: TurnChunk): void => {
    if (c.seq !== cl.lastSeq + 1) violations.push(`client ${cl.id} got seq ${c.seq} after ${cl.lastSeq}`);
    const want = script[c.seq - 1];
    if (!want || want.kind !== c.kind || want.data !== c.data || c.turnId !== turnId) violations.push(`client ${cl.id} seq ${c.seq} content differs`);
    cl.lastSeq = c.seq;
    cl.received.push(c);
  };

  const leave = (cl: ChaosClient): void => {
    cl.sub?.unsubscribe();
    cl.sub = null;
    cl.session++;
  };

  let producing = true;
  const join = (cl: ChaosClient): void => {
    if (cl.sub || cl.ended || (cl.id === 0 && producing)) return; // client 0 is the late joiner
    const session = ++cl.session;
    const before = reg.accumulated(turnId)!.lastSeq;
    const sub = reg.subscribeOrReplay(turnId, cl.lastSeq, {
      onChunks: (chunks) => {
        if (cl.session !== session) violations.push(`client ${cl.id} got chunks on a closed session`);
        for (const c of chunks) accept(cl, c);
        const r = rand();
        if (r < 0.002) leave(cl); // leave from inside a delivery
        else if (r < 0.006) {
          const other = clients[Math.floor(rand() * clients.length)]!;
          if (!other.sub && !other.ended) { reentrantJoins++; join(other); } // join during someone's fan-out
        } else if (r < 0.008) {
          const other = clients[Math.floor(rand() * clients.length)]!;
          queueMicrotask(() => join(other));
        }
      },
      onEnd: (end) => {
        if (cl.session !== session) violations.push(`client ${cl.id} got end on a closed session`);
        cl.ended = end;
        cl.sub = null;
      },
    });
    cl.joins++;
    if (before > 0 && !sub.ended) cl.midStreamJoins++;
    for (const c of sub.replay) accept(cl, c);
    if (sub.ended) cl.ended = sub.ended;
    else cl.sub = sub;
  };

  const producer = (async () => {
    try {
      for (let i = 0; i < script.length; i++) {
        const s = script[i]!;
        const c = reg.append(turnId, s.kind, s.data);
        if (c.seq !== i + 1) violations.push(`append returned seq ${c.seq} for #${i + 1}`);
        if (rand() < 0.3) await tick(rand);
      }
      reg.end(turnId, { status: 'completed' });
    } catch (e) {
      violations.push(`producer failed: ${String(e)}`);
    } finally {
      producing = false;
    }
  })();

  // Client 0 joins only after the end (a late joiner); the others come and go while producing.
  // The loop stops at the first violation or after MAX_SPINS, so a broken registry fails, never hangs.
  let spins = 0;
  const chaos = (async () => {
    while ((producing || clients.some((c) => !c.ended)) && violations.length === 0 && spins++ < MAX_SPINS) {
      await tick(rand);
      const cl = clients[Math.floor(rand() * clients.length)]!;
      try {
        if (cl.sub && rand() < 0.3) leave(cl);
        else if (!cl.sub && (rand() < 0.5 || !producing)) join(cl);
      } catch (e) {
        violations.push(`client ${cl.id} join failed: ${String(e)}`);
      }
    }
  })();
  await Promise.all([producer, chaos]);

  return { script, clients, violations, spins, reentrantJoins, persisted, accumulated: reg.accumulated(turnId) };
}
