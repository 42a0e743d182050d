/**
 * The cost ledger in the status bar (SPEC 3.4): today's spend and the balance, from `getUsage`,
 * read when the extension starts and again whenever a run ends in any thread (`threadChanged`
 * of `watchThreads`, so a `vox chat` in a terminal counts too). Hidden until something was spent
 * or a balance granted; a click opens the Usage tab (./usage-panel.ts). The words: ./usage-status-text.ts.
 */
import * as vscode from 'vscode';
import { usageStatusText } from './usage-status-text';
import type { ExtensionContribution } from '../contribution';

export const usageStatus: ExtensionContribution = {
  name: 'usage status',
  commands: [],
  activate({ host, log }, scope) {
    const item = scope.add(vscode.window.createStatusBarItem('vox.usage', vscode.StatusBarAlignment.Right, 99));
    item.name = 'Vox: spend today';
    item.command = 'vox.showUsage';
    let disposed = false;
    const refresh = async (): Promise<void> => {
      try {
        const shown = usageStatusText(await (await host.client()).call('getUsage', {}));
        if (disposed) return;
        if (!shown) return void item.hide();
        item.text = shown.text;
        item.tooltip = shown.tooltip;
        item.show();
      } catch (e) {
        log.warn(`the spend in the status bar could not be read: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    void (async () => {
      const client = await host.client();
      const off = client.on('threadChanged', (u) => {
        if (u.eventType === 'run.ended') void refresh();
      });
      scope.add({ dispose: () => { disposed = true; off(); } });
      await client.call('watchThreads', {});
      await refresh();
    })().catch((e: unknown) => log.warn(`the spend in the status bar is not watched: ${e instanceof Error ? e.message : String(e)}`));
  },
};
