/**
 * The repetition guard as handlers of the agent loop's stages (../agent/hooks.ts), installed by
 * the composition root for every run:
 *   beforeModelCall  (blocking) waits for xxh64 (loaded once, at install) and gives the call fresh
 *                    guards: one per model call, so a loop is judged within one stream (a turn's
 *                    steps are separated by tool calls, which are progress, not a loop)
 *   streamDelta      (stopsTurn) feeds the delta to the guard of its channel — the answer text and
 *                    the reasoning each have their own, since a looping reasoning channel is a loop
 *                    too and the two interleave; a RepetitionError fails the turn, which aborts the
 *                    stream and keeps the text that streamed before it
 *   turnEnd          drops the run's guards
 */
import type { HookBus } from '../agent/hooks';
import { loadRepetitionGuard, RepetitionGuard } from './repetition-guard';

/** The name the guard's handlers carry (reported failures, HookFailure). */
export const REPETITION_HOOK = 'repetition guard';

interface RunGuards { text: RepetitionGuard; reasoning: RepetitionGuard }

export function installRepetitionGuard(bus: HookBus): () => void {
  const ready = loadRepetitionGuard();
  ready.catch(() => undefined); // reported by the first model call that waits for it
  const runs = new Map<string, RunGuards>();
  const off = [
    bus.on('beforeModelCall', async (c) => {
      await ready;
      const g = runs.get(c.runId);
      if (g) {
        g.text.reset();
        g.reasoning.reset();
      } else runs.set(c.runId, { text: new RepetitionGuard(), reasoning: new RepetitionGuard() });
    }, { name: REPETITION_HOOK }),
    bus.on('streamDelta', (c) => runs.get(c.runId)?.[c.kind].push(c.delta), { name: REPETITION_HOOK, failure: 'stopsTurn' }),
    bus.on('turnEnd', (c) => void runs.delete(c.runId), { name: REPETITION_HOOK }),
  ];
  return () => {
    off.forEach((f) => f());
    runs.clear();
  };
}
