/**
 * `vox rules` and `vox system-prompt` (SPEC 6.1, 6.2), clients of the rule commands:
 *   vox rules list [--json]                         user, workspace and peer rules; broken files (exit 1)
 *   vox rules show <name> [--json]                  one rule, $variables resolved
 *   vox rules create <name> --body T [--attach always|manual] [--description D] [--path GLOB]… [--scope workspace]
 *   vox rules enable|disable <name>                 the workspace's toggle (.vox/rules/.disabled.json)
 *   vox rules preview <prompt...>                   the stripped prompt, the <user_rules> block, warnings
 *   vox system-prompt [--thread ID]                 the resolved system prompt (+ the always rules' block)
 */
import type { Command } from 'commander';
import type { RuleListView, RuleView } from '../protocol/commands/rules';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

type Cwd = Flags & { cwd?: string };

export function formatRule(r: RuleView): string {
  const head = `${r.name}  [${r.scope}, ${r.attach}${r.enabled ? '' : ', disabled'}]  ${r.source}${r.overrides ? `  (overrides ${r.overrides})` : ''}`;
  const lines = [head];
  if (r.description) lines.push(`  ${r.description}`);
  if (r.paths.length > 0) lines.push(`  paths: ${r.paths.join(', ')}`);
  return lines.join('\n');
}

export function formatRuleList(v: RuleListView): string {
  const lines = v.rules.length === 0 ? ['no rules (add .vox/rules/<name>.md, or `vox rules create`)'] : v.rules.map(formatRule);
  if (!v.readPeerFiles) lines.push('(CLAUDE.md, AGENTS.md and .clinerules are not read: vox.readPeerRuleFiles is off)');
  for (const e of v.errors) lines.push(`error: ${e.message}`);
  return lines.join('\n');
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function registerRulesCommands(program: Command, run: (p: Promise<number>) => void): void {
  const rules = program.command('rules').description('rules (SPEC 6.1): list | show | create | enable | disable | preview');
  const open = <T>(o: Cwd, reading: boolean, f: Parameters<typeof withClient<T>>[1]) =>
    withClient<T>({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading }, f);
  rules.command('list').description('every rule with its scope, attach mode, enabled state and source; broken rule files (exit 1)')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((o: Cwd) => run(open(o, true, async ({ client }) => {
      const v = await client.call('listRules', {});
      print(o, formatRuleList(v), v);
      return v.errors.length > 0 ? 1 : 0;
    })));
  rules.command('show').description('one rule and its body ($variables resolved)').argument('<name>')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((name: string, o: Cwd) => run(open(o, true, async ({ client }) => {
      const r = await client.call('getRule', { name });
      print(o, `${formatRule(r)}\n\n${r.body}`, r);
      return 0;
    })));
  rules.command('create').description('create a workspace rule (.vox/rules/<name>.md)').argument('<name>')
    .requiredOption('--body <text>', 'what the rule tells the model').option('--attach <mode>', 'always | manual (default manual: invoked with @name)', 'manual')
    .option('--description <text>', 'one line shown in lists and the @ popup').option('--path <glob>', 'also attach when a file in context matches (repeatable)', collect)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((name: string, o: Cwd & { body: string; attach: string; description?: string; path?: string[] }, cmd: Command) => run((async () => {
      if (o.attach !== 'always' && o.attach !== 'manual') throw new CliUsageError(`--attach is always or manual, got ${JSON.stringify(o.attach)}`, cmd);
      const attach = o.attach;
      return open(o, false, async ({ client }) => {
        const r = await client.call('createRule', { scope: 'workspace', name, attach, body: o.body, ...(o.description ? { description: o.description } : {}), ...(o.path ? { paths: o.path } : {}) });
        print(o, `created ${formatRule(r)}`, r);
        return 0;
      });
    })()));
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    rules.command(verb).description(`${verb} a rule in this workspace (.vox/rules/.disabled.json)`).argument('<name>')
      .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
      .action((name: string, o: Cwd) => run(open(o, false, async ({ client }) => {
        const r = await client.call('setRuleEnabled', { name, enabled });
        print(o, `${r.name} is ${r.enabled ? 'enabled' : 'disabled'}`, r);
        return 0;
      })));
  }
  rules.command('preview').description('what a prompt would get: manual @rule tokens stripped, the <user_rules> block, warnings').argument('<prompt...>')
    .option('--mention-path <path>', 'a file in the turn\'s context (for rules with paths; repeatable)', collect)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((words: string[], o: Cwd & { mentionPath?: string[] }) => run(open(o, true, async ({ client }) => {
      const v = await client.call('previewRules', { prompt: words.join(' '), ...(o.mentionPath ? { mentionPaths: o.mentionPath } : {}) });
      const human = [`prompt: ${v.prompt}`, `rules: ${v.rules.length > 0 ? v.rules.join(', ') : 'none'}`, ...v.warnings.map((w) => `warning: ${w}`), ...(v.block ? ['', v.block] : [])];
      print(o, human.join('\n'), v);
      return 0;
    })));
  program.command('system-prompt').description('the system prompt a turn gets ($variables resolved), with the always rules\' <user_rules> block')
    .option('--thread <id>', 'as a turn of this thread gets it (Plan mode adds its instructions)')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((o: Cwd & { thread?: string }) => run(open(o, true, async ({ client }) => {
      const v = await client.call('getSystemPrompt', { threadId: o.thread ?? null });
      print(o, v.rulesBlock ? `${v.systemPrompt}\n\n${v.rulesBlock}` : v.systemPrompt, v);
      return 0;
    })));
}
