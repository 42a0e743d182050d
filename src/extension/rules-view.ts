/**
 * "Vox Rules" tree in the Vox container (SPEC 6.1) and the rule palette commands, all clients
 * of the rule commands: user rules (settings), workspace rules (.vox/rules/*.md) and peer files
 * (CLAUDE.md, AGENTS.md, .clinerules), each with its attach mode and enabled state; an inline
 * toggle, Edit (opens the file, or the vox.rules setting), a tooltip previewing what the rule adds,
 * broken files listed with their error. "Vox: Show System Prompt" (SPEC 6.2) opens the resolved
 * prompt in a read-only `vox-prompt:` document. The tree refreshes when rule files or settings change.
 */
import * as vscode from 'vscode';
import type { RuleListView, RuleView } from '../protocol/commands/rules';
import { ruleNameProblem } from '../protocol/commands/rules';
import type { ContributionScope, ExtensionContribution } from './contribution';
import type { EngineHost } from './engine-host';

export const RULES_VIEW_ID = 'vox.rules';
export const PROMPT_SCHEME = 'vox-prompt';
/** Characters of a rule's body shown in its tooltip (the preview). */
const TOOLTIP_BODY_CHARS = 1_500;

type Node = { kind: 'rule'; rule: RuleView } | { kind: 'error'; error: RuleListView['errors'][number] } | { kind: 'empty' };

export class RulesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** The last listing (tests read it). */
  last: RuleListView | null = null;

  constructor(private readonly host: EngineHost) {
    const refresh = () => this.refresh();
    for (const glob of ['.vox/rules/**', 'CLAUDE.md', 'AGENTS.md', '.clinerules', '.clinerules/**']) {
      const w = vscode.workspace.createFileSystemWatcher(glob);
      this.disposables.push(w, w.onDidChange(refresh), w.onDidCreate(refresh), w.onDidDelete(refresh));
    }
    this.disposables.push(host.onDidChange(refresh));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node) return [];
    const v = await (await this.host.client()).call('listRules', {});
    this.last = v;
    const out: Node[] = [...v.rules.map((rule) => ({ kind: 'rule' as const, rule })), ...v.errors.map((error) => ({ kind: 'error' as const, error }))];
    return out.length > 0 ? out : [{ kind: 'empty' }];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'empty') {
      const item = new vscode.TreeItem('No rules yet — add one with "Vox: Create Rule…"');
      item.command = { command: 'vox.createRule', title: 'Create Rule' };
      return item;
    }
    if (node.kind === 'error') {
      const item = new vscode.TreeItem(node.error.source);
      item.description = node.error.message.replace(`${node.error.source}${node.error.line !== null ? `:${node.error.line}` : ''}: `, '');
      item.tooltip = node.error.message;
      item.iconPath = new vscode.ThemeIcon('error');
      item.contextValue = 'voxRuleError';
      return item;
    }
    const r = node.rule;
    const item = new vscode.TreeItem(r.name);
    item.id = `rule:${r.name}`;
    item.description = `${r.attach}${r.paths.length > 0 ? ` · ${r.paths.join(', ')}` : ''} · ${r.scope}${r.enabled ? '' : ' · disabled'}`;
    item.iconPath = new vscode.ThemeIcon(r.enabled ? (r.attach === 'always' ? 'pinned' : 'mention') : 'circle-slash');
    item.contextValue = `voxRule.${r.enabled ? 'enabled' : 'disabled'}`;
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**${r.name}** — ${r.attach === 'always' ? 'added to every prompt' : `added when you type \`@${r.name}\``}${r.paths.length > 0 ? `, or when a file matching ${r.paths.map((p) => `\`${p}\``).join(', ')} is in context` : ''}\n\n`);
    md.appendMarkdown(`${r.source}${r.overrides ? ` (overrides ${r.overrides})` : ''}${r.enabled ? '' : ' · disabled'}\n\n`);
    md.appendMarkdown('What it adds to the turn:\n');
    md.appendCodeblock(`<rule name="${r.name}">\n${r.body.slice(0, TOOLTIP_BODY_CHARS)}${r.body.length > TOOLTIP_BODY_CHARS ? '\n…' : ''}\n</rule>`, 'xml');
    item.tooltip = md;
    item.command = { command: 'vox.editRule', title: 'Edit Rule', arguments: [node] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

/** `vox-prompt:` documents: the resolved system prompt (read-only, like every content provider's). */
export class PromptDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  constructor(private readonly host: EngineHost) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const threadId = new URLSearchParams(uri.query).get('thread');
    const v = await (await this.host.client()).call('getSystemPrompt', { threadId: threadId || null });
    const rules = v.rules.length > 0 ? `\n\n--- The always rules (${v.rules.join(', ')}) add to every prompt: ---\n\n${v.rulesBlock}` : '';
    return `${v.systemPrompt}${rules}\n`;
  }
}

async function pickRule(host: EngineHost, node: unknown, placeHolder: string): Promise<RuleView | undefined> {
  const given = (node as { kind?: string; rule?: RuleView } | undefined)?.rule;
  if (given) return given;
  const v = await (await host.client()).call('listRules', {});
  const pick = await vscode.window.showQuickPick(v.rules.map((r) => ({ label: r.name, description: `${r.attach} · ${r.scope}${r.enabled ? '' : ' · disabled'}`, rule: r })), { placeHolder });
  return pick?.rule;
}

function registerRulesCommands(host: EngineHost, view: RulesView, log: vscode.LogOutputChannel, contribution: ContributionScope): void {
  const cmd = (id: string, fn: (node?: unknown) => Promise<void>) => contribution.command(id, (node) => fn(node), { log, after: () => view.refresh() });
  cmd('vox.createRule', async () => {
    const name = await vscode.window.showInputBox({ prompt: 'Rule name (used as @name)', placeHolder: 'style', validateInput: (v) => ruleNameProblem(v.trim()) });
    if (!name) return;
    const attach = await vscode.window.showQuickPick(
      [{ label: 'manual', description: 'added when a prompt says @' + name.trim() }, { label: 'always', description: 'added to every prompt' }], { placeHolder: 'When is it added?' });
    if (!attach) return;
    const scope = await vscode.window.showQuickPick(
      [{ label: 'workspace', description: `.vox/rules/${name.trim()}.md (shared with the repository)` }, { label: 'user', description: 'your settings (vox.rules), every workspace' }], { placeHolder: 'Where is it kept?' });
    if (!scope) return;
    const body = await vscode.window.showInputBox({ prompt: 'What the rule tells the model (you can edit the file later)', placeHolder: 'Use tabs for indentation.' });
    if (body === undefined) return;
    const r = await (await host.client()).call('createRule', { scope: scope.label as 'user' | 'workspace', name: name.trim(), attach: attach.label as 'always' | 'manual', body });
    await openRule(r);
  });
  cmd('vox.editRule', async (node) => {
    const r = await pickRule(host, node, 'Edit which rule?');
    if (r) await openRule(r);
  });
  cmd('vox.toggleRule', async (node) => {
    const r = await pickRule(host, node, 'Enable or disable which rule?');
    if (!r) return;
    const v = await (await host.client()).call('setRuleEnabled', { name: r.name, enabled: !r.enabled });
    void vscode.window.setStatusBarMessage(`Vox: rule ${v.name} ${v.enabled ? 'enabled' : 'disabled'}`, 3000);
  });
  cmd('vox.enableRule', async (node) => {
    const r = await pickRule(host, node, 'Enable which rule?');
    if (r) await (await host.client()).call('setRuleEnabled', { name: r.name, enabled: true });
  });
  cmd('vox.disableRule', async (node) => {
    const r = await pickRule(host, node, 'Disable which rule?');
    if (r) await (await host.client()).call('setRuleEnabled', { name: r.name, enabled: false });
  });
  cmd('vox.refreshRules', async () => undefined);
  cmd('vox.showSystemPrompt', async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: PROMPT_SCHEME, path: '/System Prompt.md', query: `t=${Date.now()}` }));
    await vscode.window.showTextDocument(doc, { preview: false });
  });

  async function openRule(r: RuleView): Promise<void> {
    if (r.scope === 'user') {
      await vscode.commands.executeCommand('workbench.action.openSettingsJson');
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return;
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder.uri, r.source));
  }
}

/** The "Vox Rules" tree, its `vox-prompt:` documents and the rule commands. */
export const rules: ExtensionContribution<RulesView> = {
  name: 'rules view',
  commands: ['vox.createRule', 'vox.editRule', 'vox.toggleRule', 'vox.enableRule', 'vox.disableRule', 'vox.refreshRules', 'vox.showSystemPrompt'],
  activate({ host, log }, scope) {
    const view = scope.add(new RulesView(host));
    scope.add(vscode.window.registerTreeDataProvider(RULES_VIEW_ID, view));
    scope.add(vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, new PromptDocuments(host)));
    registerRulesCommands(host, view, log, scope);
    return view;
  },
};
