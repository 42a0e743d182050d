/**
 * The ledger's part of a turn. beforeModelCall runs the pre-flight gate (./gate.ts) on the
 * request as it will be sent (after compaction): its prompt counted offline — the model's real
 * tokenizer where Vox has one, else the character approximation, never the provider's counting
 * API, so nothing leaves the machine before the gate decides — and a refusal fails the turn with
 * the typed error before anything is sent. afterModelCall records the response's receipt
 * (./writes.ts) by the provider's response id, or the run and step when it sends none, and tells
 * the host of a `warn` cap's threshold crossed. Local models cost nothing: both stages skip them.
 */
import type { HookBus } from '../agent/hooks';
import type { Host } from '../host';
import { countPrompt, countText, countSourceOf } from '../providers/token-count';
import type { ResolvedModel, ToolSpec, Usage } from '../providers/types';
import type { VoxStore } from '../store/store';
import { resolveCard } from './catalog';
import { checkCall, crossedWarnings, estimateCall } from './gate';
import { receiptOf } from './receipt';
import { recordReceipt } from './writes';

/** After compaction (-100) and the other request edits: the gate prices the request as sent. */
const GATE_ORDER = 100;

interface Pending { model: ResolvedModel; promptTokens: number }

export function installLedgerStages(bus: HookBus, store: VoxStore, host: Host): () => void {
  // The model and prompt count of each run's call in flight, from the gate to its receipt.
  const pending = new Map<string, Pending>();
  // The prompt of each run's previous call: what the provider likely has cached for the next.
  const lastPrompt = new Map<string, number>();
  const offs = [
    bus.on('beforeModelCall', async ({ turn, specs, runId, threadId }, out) => {
      if (turn.model.provider.isLocal) return;
      const { tokens } = await countPrompt(turn.model, out.messages, specs as ToolSpec[], { offline: true });
      pending.set(runId, { model: turn.model, promptTokens: tokens });
      const card = resolveCard(store.db, turn.model.label, turn.model.model);
      const estimate = card ? estimateCall(card, tokens, lastPrompt.get(runId) ?? 0) : null;
      lastPrompt.set(runId, tokens);
      checkCall(store.db, { threadId, runId, model: turn.model.label, estimate });
    }, { name: 'ledger: pre-flight gate', order: GATE_ORDER, failure: 'stopsTurn' }),
    bus.on('afterModelCall', async ({ runId, threadId, step, usage, text, toolCalls }) => {
      const p = pending.get(runId);
      if (!p) return;
      pending.delete(runId);
      const reported = usage.inputTokens > 0 || usage.outputTokens > 0 || usage.responseId !== undefined;
      let counted: Usage = usage;
      if (!reported) {
        // No usage from the provider: Vox's own count of the prompt and of what came back.
        const output = await countText(countSourceOf(p.model), text + toolCalls.map((c) => c.name + c.argumentsJson).join(''));
        counted = { inputTokens: p.promptTokens, outputTokens: output, estimated: true };
      }
      const card = resolveCard(store.db, p.model.label, p.model.model);
      const receipt = receiptOf({ threadId, runId, responseId: usage.responseId ?? `${runId}#${step}`, model: p.model.label }, counted, card, !reported);
      if (!recordReceipt(store, receipt) || receipt.costMicroUsd === null) return;
      for (const message of crossedWarnings(store.db, { threadId, runId, costMicroUsd: receipt.costMicroUsd })) host.notify({ level: 'warning', source: 'budget', message });
    }, { name: 'ledger: receipt', failure: 'reported' }),
    bus.on('turnEnd', ({ runId }) => {
      pending.delete(runId);
      lastPrompt.delete(runId);
    }, { name: 'ledger: forget the run', blocking: false, failure: 'reported' }),
  ];
  return () => offs.forEach((off) => off());
}
