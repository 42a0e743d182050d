/**
 * Handoff in a turn (SPEC 5.1, ./apply.ts): when the model changed since the run before (or the
 * prompt chose a strategy), the `<context_handoff>` preamble goes before the turn's user message.
 * A failure is reported and the request goes as it was.
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import type { VoxStore } from '../store/store';
import { applyHandoff } from './apply';

/** After the turn's rules block, before app contexts (so the message reads: apps, handoff, prompt, rules). */
const HANDOFF_ORDER = PREPARE_ORDER.messages + 10;

export function installHandoffStages(bus: HookBus, store: VoxStore): () => void {
  return bus.on('prepareRequest', async ({ turn }, out) => {
    await applyHandoff(store, turn, out.messages, { record: !turn.resume, ...(turn.handoff ? { choice: turn.handoff } : {}) });
  }, { name: 'handoff: preamble', order: HANDOFF_ORDER });
}
