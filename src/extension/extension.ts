/**
 * VS Code adapter (thin): opens the engine lazily under the extension's global storage, keeps
 * API keys in SecretStorage, and exposes the engine through commands. The chat webview and the
 * Source Control views build on this (see docs/ARCHITECTURE.md).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Engine } from '../engine/engine';
import { DEFAULT_MODEL_REF } from '../engine/providers/resolve';
import { demoModelPath, DEMO_MODEL_NOTICE } from '../engine/model/demo-model';

const SECRET_KEYS = { openai: 'vox.openaiApiKey', anthropic: 'vox.anthropicApiKey' } as const;

let engine: Engine | undefined;
let log: vscode.LogOutputChannel;

async function getEngine(ctx: vscode.ExtensionContext): Promise<Engine> {
  if (engine) return engine;
  const cfg = vscode.workspace.getConfiguration('vox');
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? ctx.globalStorageUri.fsPath;
  engine = new Engine({
    dbPath: path.join(ctx.globalStorageUri.fsPath, 'vox.db'),
    workspaceRoot: root,
    providers: {
      demoModelPath: demoModelPath(ctx.extensionPath),
      openaiApiKey: await ctx.secrets.get(SECRET_KEYS.openai),
      openaiBaseUrl: cfg.get<string>('openaiBaseUrl') || undefined,
      anthropicApiKey: await ctx.secrets.get(SECRET_KEYS.anthropic),
    },
  });
  if (engine.recovered.length > 0) log.warn(`marked ${engine.recovered.length} interrupted run(s) from an earlier session`);
  return engine;
}

async function ask(ctx: vscode.ExtensionContext): Promise<void> {
  const prompt = await vscode.window.showInputBox({ prompt: 'Ask Vox', placeHolder: 'What should Vox do?' });
  if (!prompt) return;
  const e = await getEngine(ctx);
  const modelRef = vscode.workspace.getConfiguration('vox').get<string>('model') || DEFAULT_MODEL_REF;
  if (modelRef === DEFAULT_MODEL_REF) log.info(DEMO_MODEL_NOTICE);
  const h = e.runner.startTurn({ prompt, model: e.models.resolve(modelRef) });
  log.show(true);
  log.info(`> ${prompt}`);
  let line = '';
  const sub = e.streams.subscribeOrReplay(h.runId, 0, {
    onChunks: (chunks) => {
      for (const c of chunks) if (c.kind === 'text') line += c.data;
    },
  });
  for (const c of sub.replay) if (c.kind === 'text') line += c.data;
  const result = await h.done;
  sub.unsubscribe();
  log.info(line);
  log.info(`[${result.status}]${result.error ? ' ' + result.error : ''}`);
}

export function activate(ctx: vscode.ExtensionContext): void {
  log = vscode.window.createOutputChannel('Vox', { log: true });
  ctx.subscriptions.push(
    log,
    vscode.commands.registerCommand('vox.newThread', () => ask(ctx)),
    vscode.commands.registerCommand('vox.showLogs', () => log.show()),
    vscode.commands.registerCommand('vox.setApiKey', async () => {
      const which = await vscode.window.showQuickPick(Object.keys(SECRET_KEYS), { placeHolder: 'Provider' });
      if (!which) return;
      const key = await vscode.window.showInputBox({ prompt: `${which} API key`, password: true, ignoreFocusOut: true });
      if (key === undefined) return;
      await ctx.secrets.store(SECRET_KEYS[which as keyof typeof SECRET_KEYS], key);
      await engine?.dispose();
      engine = undefined;
    }),
  );
}

export async function deactivate(): Promise<void> {
  await engine?.dispose();
  engine = undefined;
}
