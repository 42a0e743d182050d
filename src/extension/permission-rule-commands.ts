/**
 * "Vox: Permission Rules…": every rule the user can remove — the workspace's
 * `.vox/permissions.json` and each recent thread's own (an "Always allow" for that thread) — in
 * one picker, with where it lives; the pick is removed through `removePermissionRule`, the same
 * protocol command as the CLI's (refused when the rule changed meanwhile). Rules from settings
 * are listed too, with "Open Settings" instead (they live in the user's settings file). One
 * contribution (./contribution.ts).
 */
import * as vscode from 'vscode';
import type { ExtensionContribution } from './contribution';

/** Recent threads whose own rules are listed (the picker stays quick with many threads). */
export const RULE_THREADS_LISTED = 50;

export const permissionRuleCommands: ExtensionContribution = {
  name: 'permission rules',
  commands: ['vox.permissionRules'],
  activate({ host, log }, scope) {
    scope.command('vox.permissionRules', async () => {
      const client = await host.client();
      const base = await client.call('getPermissions', {});
      const { threads } = await client.call('listThreads', { limit: RULE_THREADS_LISTED });
      type Item = vscode.QuickPickItem & { remove?: { scope: 'workspace' | 'thread'; threadId?: string; index: number; label: string }; settings?: boolean };
      const items: Item[] = base.rules.filter((r) => r.scope !== 'thread').map((r) => r.scope === 'workspace' && r.index !== undefined
        ? { label: r.label, description: `workspace · ${base.workspaceFile}`, remove: { scope: 'workspace', index: r.index, label: r.label } }
        : { label: r.label, description: 'settings (vox.permissions)', settings: true });
      for (const t of threads) {
        const p = await client.call('getPermissions', { threadId: t.id });
        for (const r of p.rules) {
          if (r.scope === 'thread' && r.index !== undefined) items.push({ label: r.label, description: `this thread only · ${t.title}`, remove: { scope: 'thread', threadId: t.id, index: r.index, label: r.label } });
        }
      }
      if (items.length === 0) return void vscode.window.showInformationMessage('Vox: no permission rules. "Always allow…" on an approval adds one for a thread or the workspace.');
      const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Pick a rule to remove (deny beats ask beats allow beats the mode)' });
      if (!pick) return;
      if (pick.settings) return void vscode.commands.executeCommand('workbench.action.openSettings', 'vox.permissions');
      const r = pick.remove!;
      const ok = await vscode.window.showWarningMessage(`Remove the rule "${r.label}" (${pick.description})?`, { modal: true }, 'Remove');
      if (ok !== 'Remove') return;
      await client.call('removePermissionRule', { scope: r.scope, index: r.index, label: r.label, ...(r.threadId ? { threadId: r.threadId } : {}) });
      void vscode.window.showInformationMessage(`Vox: removed "${r.label}"; the next such call asks again.`);
    }, { log });
  },
};
