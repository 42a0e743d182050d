/** The sanitiser's stage: inline `<think>` blocks of a model's stream go to the reasoning channel (./stream.ts). */
import type { HookBus } from '../agent/hooks';
import { splitReasoning } from './stream';

export function installSanitizeStages(bus: HookBus): () => void {
  return bus.on('modelStream', (_c, out) => {
    out.stream = splitReasoning(out.stream);
  }, { name: 'sanitize: think tags', failure: 'stopsTurn' });
}
