/**
 * Benchmark: what the turn stages cost the loop (src/engine/agent/hooks.ts), next to a baseline in
 * the same run — the same handlers called directly in a plain array, as a loop with hard-wired
 * call sites would. Per streamed delta (streamDelta, with the repetition guard's and two observers'
 * handlers installed on a run's child bus) and per model call (beforeModelCall and reviewStep
 * awaited with their outputs). Run: `npm run bench:turn-stages`. Not a test.
 */
import { performance } from 'node:perf_hooks';
import { HookBus, type StepControl } from '../src/engine/agent/hooks';

/** Deltas per timed pass, and calls per timed pass. */
const DELTAS = 200_000;
const CALLS = 20_000;
/** Timed passes; the median is reported. */
const REPEATS = 7;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const info = { threadId: 't', runId: 'r', workspaceRoot: '/w', model: 'm' };
let sink = 0;
const observers = [(d: string) => void (sink += d.length), (d: string) => void (sink ^= d.charCodeAt(0)), (d: string) => void (sink += d.length & 1)];

const engineBus = new HookBus(() => undefined);
for (const [i, f] of observers.entries()) engineBus.on('streamDelta', (c) => f(c.delta), { name: `observer ${i}`, failure: i === 0 ? 'stopsTurn' : 'reported' });
engineBus.on('beforeModelCall', (_c, out) => void (sink += out.messages.length), { name: 'call observer' });
engineBus.on('reviewStep', (_c, out) => void (out.control.kind === 'keep' && (sink += 1)), { name: 'review' });
const runBus = engineBus.with();

async function main(): Promise<void> {
  const deltas = Array.from({ length: DELTAS }, (_v, i) => `tok${i % 97}`);
  const perDelta = { stages: [] as number[], direct: [] as number[] };
  const perCall = { stages: [] as number[], direct: [] as number[] };
  for (let r = 0; r < REPEATS; r++) {
    let t0 = performance.now();
    for (const d of deltas) runBus.delta({ ...info, kind: 'text', delta: d });
    perDelta.stages.push(((performance.now() - t0) * 1e6) / DELTAS);
    t0 = performance.now();
    for (const d of deltas) for (const f of observers) f(d);
    perDelta.direct.push(((performance.now() - t0) * 1e6) / DELTAS);

    const messages = [{ role: 'system' as const, content: 's' }];
    t0 = performance.now();
    for (let i = 0; i < CALLS; i++) {
      await runBus.run('beforeModelCall', { ...info, step: i, turn: null as never, specs: [], scratch: new Map() }, { messages });
      await runBus.run('reviewStep', { ...info, step: i, text: '', toolCalls: [], scratch: new Map() }, { control: { kind: 'keep' } as StepControl });
    }
    perCall.stages.push(((performance.now() - t0) * 1e6) / CALLS);
    t0 = performance.now();
    for (let i = 0; i < CALLS; i++) {
      await Promise.resolve((sink += messages.length));
      await Promise.resolve((sink += 1));
    }
    perCall.direct.push(((performance.now() - t0) * 1e6) / CALLS);
  }
  const row = (name: string, m: { stages: number[]; direct: number[] }) => {
    const a = median(m.stages);
    const b = median(m.direct);
    console.log(`${name.padEnd(34)} stages ${a.toFixed(0).padStart(6)} ns   direct calls ${b.toFixed(0).padStart(6)} ns   ratio ${(a / b).toFixed(2)}×   (+${(a - b).toFixed(0)} ns)`);
  };
  console.log(`turn stages, median of ${REPEATS} passes (sink ${sink & 1})`);
  row('per streamed delta (3 handlers)', perDelta);
  row('per model call (2 awaited stages)', perCall);
}

void main();
