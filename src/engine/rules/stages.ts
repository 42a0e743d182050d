/**
 * Rules in a turn (SPEC 6.1, 6.2): the system prompt with its $variables resolved and the
 * workspace's appended text (./service.ts), and the turn's `<user_rules>` block after its user
 * message — in the request only, the stored message stays as typed.
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import type { RulesService } from './service';

/** After Plan mode's prompt: the rules' prompt includes it (a failure leaves Plan mode's). */
const RULES_SYSTEM_ORDER = PREPARE_ORDER.system + 10;

export function installRuleStages(bus: HookBus, rules: RulesService): () => void {
  const off = [
    bus.on('prepareRequest', async ({ threadId }, out) => {
      out.system = await rules.systemPrompt(threadId);
    }, { name: 'rules: system prompt and variables', order: RULES_SYSTEM_ORDER }),
    bus.on('prepareRequest', ({ turn }, out) => {
      const last = out.messages[out.messages.length - 1];
      if (turn.userRules && last?.role === 'user') out.messages[out.messages.length - 1] = { ...last, content: `${last.content}\n\n${turn.userRules}` };
    }, { name: 'rules: the turn\'s rules block', order: PREPARE_ORDER.messages, failure: 'stopsTurn' }),
  ];
  return () => off.forEach((f) => f());
}
