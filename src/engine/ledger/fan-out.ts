/**
 * The gate for calls that leave together (SPEC 3.4): a variant fan-out is checked as a whole
 * before any of its worktrees or requests exist — each paid model's first call estimated from the
 * prompt (counted offline, as the per-call gate does; the system prompt and tool schemas each run
 * adds are the per-call gate's to count), their sum against the balance and today's and the
 * thread's caps, each against the per-run cap. Local models cost nothing and are left out.
 */
import { countPrompt } from '../providers/token-count';
import type { ResolvedModel } from '../providers/types';
import type { SqlDatabase } from '../store/driver';
import { resolveCard } from './catalog';
import { checkCalls, estimateCall } from './gate';

export async function checkFanOut(db: SqlDatabase, fan: { models: readonly ResolvedModel[]; prompt: string; threadId: string | null; what: string }): Promise<void> {
  const calls = [];
  for (const model of fan.models) {
    if (model.provider.isLocal) continue;
    const { tokens } = await countPrompt(model, [{ role: 'user', content: fan.prompt }], [], { offline: true });
    const card = resolveCard(db, model.label, model.model);
    calls.push({ runId: null, model: model.label, estimate: card ? estimateCall(card, tokens, 0) : null });
  }
  if (calls.length > 0) checkCalls(db, { threadId: fan.threadId, what: fan.what, calls });
}
