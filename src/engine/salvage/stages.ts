/**
 * Salvage in a turn (SPEC 3.2, ./turn-salvage.ts): the fence syntax told to a model without native
 * tools, and after every model call the step's control value — a false refusal retried once, or
 * tool calls written as text run through the loop's tool path with their results given back as text.
 */
import { PREPARE_ORDER, type HookBus, type TurnScratch } from '../agent/hooks';
import { salvageReport, TurnSalvage } from './turn-salvage';

/** Last of the system phase: the fence syntax names the tools the turn finally offers. */
const SALVAGE_SYSTEM_ORDER = PREPARE_ORDER.system + 20;
const KEY = 'salvage';

export function installSalvageStages(bus: HookBus): () => void {
  const off = [
    bus.on('prepareRequest', ({ turn, scratch }, out) => {
      const salvage = new TurnSalvage(out.tools.offered, turn.model.toolsEnabled);
      scratch.set(KEY, salvage);
      out.system = salvage.systemPrompt(out.system);
    }, { name: 'salvage: fence syntax', order: SALVAGE_SYSTEM_ORDER, failure: 'stopsTurn' }),
    bus.on('reviewStep', ({ text, toolCalls, scratch }, out) => {
      const salvage = of(scratch);
      if (!salvage || out.control.kind !== 'keep') return;
      const review = salvage.review(text, toolCalls);
      if (review.kind === 'retry') out.control = { kind: 'retry', reminder: review.reminder, tools: salvage.toolNames };
      else if (review.kind === 'salvaged') {
        out.control = {
          kind: 'replace', displayText: review.displayText, calls: review.calls,
          report: (messages, results, steers) => {
            messages.push({ role: 'assistant', content: text });
            messages.push({ role: 'user', content: salvageReport(results, review.problems, salvage.toolNames) });
            for (const prompt of steers) messages.push({ role: 'user', content: prompt });
          },
        };
      }
    }, { name: 'salvage: review', failure: 'stopsTurn' }),
  ];
  return () => off.forEach((f) => f());
}

function of(scratch: TurnScratch): TurnSalvage | undefined {
  return scratch.get(KEY) as TurnSalvage | undefined;
}
