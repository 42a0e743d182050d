/**
 * The chat, model and settings commands (a contribution, ./contribution.ts): new thread, focus
 * the chat, approve / deny the waiting tool call (the chat's sticky bar), open it in an editor tab, send selection, stop, connect / select a model, set an API
 * key, manage the OpenAI-compatible endpoints, choose a GGUF, use Ollama, download a recommended model, open settings, show logs.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { downloadModel, RECOMMENDED_MODELS } from '../engine/model/download';
import { CONNECT_COMMAND, ConnectModelFlow } from './connect-model';
import { MANAGE_ENDPOINTS_COMMAND } from './manage-endpoints-ui';
import type { ExtensionContribution } from './contribution';
import type { SecretProvider } from './engine-host';

/** Longest selection sent to the chat in one go (characters). */
const MAX_SELECTION_CHARS = 100_000;

export const chatCommands: ExtensionContribution = {
  name: 'chat, model and settings commands',
  commands: [
    'vox.focusChat', 'vox.newThread', 'vox.approveWaiting', 'vox.denyWaiting', 'vox.openChatInEditor', 'vox.sendSelection', 'vox.stop',
    CONNECT_COMMAND, MANAGE_ENDPOINTS_COMMAND, 'vox.selectModel', 'vox.setApiKey', 'vox.chooseGguf', 'vox.useOllama', 'vox.downloadModel',
    'vox.openSettings', 'vox.showLogs',
  ],
  activate({ ctx, host, chats, log }, scope) {
    const reg = (id: string, fn: (...args: unknown[]) => unknown) => scope.command(id, fn, { log });
    const connect = new ConnectModelFlow(host, log);
    reg('vox.newThread', () => chats.toSidebar({ type: 'hostCommand', command: 'newThread' }));
    reg('vox.focusChat', () => chats.toSidebar({ type: 'hostCommand', command: 'focusComposer' }));
    // Keybindings in the chat's focus (package.json): the chat answers the approval its sticky bar shows.
    reg('vox.approveWaiting', () => chats.toFocused({ type: 'hostCommand', command: 'approveWaiting' }));
    reg('vox.denyWaiting', () => chats.toFocused({ type: 'hostCommand', command: 'denyWaiting' }));
    reg('vox.openChatInEditor', () => chats.openInEditor());
    reg('vox.sendSelection', async () => {
      const ed = vscode.window.activeTextEditor;
      if (!ed || ed.selection.isEmpty) return void vscode.window.showInformationMessage('Vox: select some code first.');
      const text = ed.document.getText(ed.selection).slice(0, MAX_SELECTION_CHARS);
      const rel = vscode.workspace.asRelativePath(ed.document.uri);
      const start = ed.selection.start.line + 1;
      const prompt = `${rel}:${start}-${ed.selection.end.line + 1}\n\`\`\`${ed.document.languageId}\n${text}\n\`\`\`\n`;
      await chats.toSidebar({ type: 'hostCommand', command: 'insertPrompt', text: prompt });
    });
    reg('vox.stop', async () => {
      // Every run of this window: chat threads and variants alike.
      const { cancelled } = await (await host.client()).call('cancelAllRuns', {});
      if (cancelled === 0) void vscode.window.showInformationMessage('Vox: nothing is running.');
    });
    // One flow from provider to a tested model; the banner's buttons, Set API Key and Use Ollama lead into it.
    reg(CONNECT_COMMAND, (preset?: unknown) => connect.run(typeof preset === 'string' ? (preset as Parameters<ConnectModelFlow['run']>[0]) : undefined));
    reg(MANAGE_ENDPOINTS_COMMAND, () => connect.manage());
    reg('vox.selectModel', async () => {
      const items: (vscode.QuickPickItem & { ref?: string })[] = host.modelChoices().map((m) => ({ label: m.label, description: m.ref, ref: m.ref }));
      try {
        for (const m of await vscode.lm.selectChatModels()) items.push({ label: `${m.name}`, description: `vscode-lm:${m.id} · ${m.vendor}`, ref: `vscode-lm:${m.id}` });
      } catch (e) {
        log.warn(`listing VS Code language models failed: ${(e as Error).message}`);
      }
      items.push({ label: '$(plug) Connect a model…', description: 'list a provider\'s models from its API', ref: CONNECT_COMMAND });
      items.push({ label: '$(server) Manage model endpoints…', description: 'rename or remove an OpenAI-compatible endpoint', ref: MANAGE_ENDPOINTS_COMMAND });
      items.push({ label: 'Other…', description: 'type provider:model, e.g. openai:gpt-4o-mini' });
      const pick = await vscode.window.showQuickPick(items, { placeHolder: `Current: ${host.model()}` });
      if (!pick) return;
      if (pick.ref === CONNECT_COMMAND) return connect.run();
      if (pick.ref === MANAGE_ENDPOINTS_COMMAND) return connect.manage();
      const ref = pick.ref ?? (await vscode.window.showInputBox({ prompt: 'Model as provider:model', placeHolder: 'openai:gpt-4o-mini · anthropic:claude-sonnet-4-5 · ollama:qwen2.5-coder · local:/path/model.gguf' }));
      if (ref) await host.setModel(ref);
    });
    reg('vox.setApiKey', async () => {
      const which = (await vscode.window.showQuickPick(['openai', 'anthropic', 'openrouter'], { placeHolder: 'Which provider?' })) as SecretProvider | undefined;
      if (!which) return;
      const key = await vscode.window.showInputBox({ prompt: `${which} API key (stored in VS Code SecretStorage; empty removes it)`, password: true, ignoreFocusOut: true });
      if (key === undefined) return;
      await host.setSecret(which, key.trim() || undefined);
      if (!key.trim()) return void vscode.window.showInformationMessage(`Vox: ${which} key removed.`);
      // The saved key leads on to the provider's models (listed from its API) and the connection test.
      void vscode.window.showInformationMessage(`Vox: ${which} key saved.`, 'Pick a Model…').then((b) => {
        if (b) void connect.run(which as 'openai' | 'anthropic' | 'openrouter', { keySaved: true }).catch((e: unknown) => log.error(`connect: ${(e as Error).message}`));
      });
    });
    reg('vox.chooseGguf', async () => {
      const uris = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'GGUF models': ['gguf'] }, openLabel: 'Use this model' });
      if (uris?.[0]) await host.setModel(`local:${uris[0].fsPath}`);
    });
    reg('vox.useOllama', () => connect.run('ollama'));
    reg('vox.downloadModel', async () => {
      const pick = await vscode.window.showQuickPick(
        RECOMMENDED_MODELS.map((m) => ({ label: m.name, detail: m.description, description: `~${Math.round(m.approxBytes / 1e6)} MB`, m })),
        { placeHolder: 'Download a recommended model (needs internet)' },
      );
      if (!pick) return;
      const dest = path.join(ctx.globalStorageUri.fsPath, 'models', decodeURIComponent(new URL(pick.m.url).pathname.split('/').pop()!));
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Downloading ${pick.m.name}`, cancellable: true }, async (progress, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort());
        let last = 0;
        const res = await downloadModel({
          url: pick.m.url, destPath: dest, signal: ac.signal,
          onProgress: (got, total) => {
            if (!total) return progress.report({ message: `${(got / 1e6).toFixed(0)} MB` });
            const pct = (got / total) * 100;
            progress.report({ increment: pct - last, message: `${pct.toFixed(0)}%` });
            last = pct;
          },
        });
        await host.setModel(`local:${res.path}`);
      });
    });
    reg('vox.openSettings', () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:vox-dev.vox'));
    reg('vox.showLogs', () => log.show());
  },
};
