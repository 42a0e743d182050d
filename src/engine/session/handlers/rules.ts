/** Handlers of the rule commands (../../../protocol/commands/rules.ts): rules (SPEC 6.1) and the resolved system prompt (SPEC 6.2). */
import type { HandlerTable } from './types';

type RuleCommand = 'listRules' | 'getRule' | 'createRule' | 'updateRule' | 'setRuleEnabled' | 'previewRules' | 'getSystemPrompt';

export const ruleHandlers: HandlerTable<RuleCommand> = {
  listRules: ({ services: { rules } }) => rules.list(),
  getRule: ({ services: { rules } }, cmd) => rules.get(cmd.name),
  createRule: ({ services: { rules } }, cmd) =>
    rules.create({ scope: cmd.scope, name: cmd.name, attach: cmd.attach, body: cmd.body, description: cmd.description, paths: cmd.paths }),
  updateRule: ({ services: { rules } }, cmd) => rules.update(cmd.name, { attach: cmd.attach, body: cmd.body, description: cmd.description, paths: cmd.paths }),
  setRuleEnabled: ({ services: { rules } }, cmd) => rules.setEnabled(cmd.name, cmd.enabled),
  previewRules: ({ services: { rules } }, cmd) => rules.preview(cmd.prompt, cmd.mentionPaths ?? []),
  async getSystemPrompt({ services: { rules, store } }, cmd) {
    const threadId = cmd.threadId && store.hasThread(cmd.threadId) ? cmd.threadId : null;
    const [systemPrompt, always] = await Promise.all([rules.systemPrompt(threadId), rules.prepare('', [], threadId)]);
    return { systemPrompt, rulesBlock: always.block, rules: always.names };
  },
};
