#!/usr/bin/env node
/**
 * `vox` — drives the engine outside VS Code.
 *   vox chat "prompt" [--model REF] [--thread ID] [--cwd DIR] [--yes] [--json]
 *   vox threads [--json]
 *   vox show THREAD_ID [--json]
 *   vox model path | list | download [NAME|URL]
 *   vox checkpoint capture|list|diff|restore|undo   (see ./vcs-commands.ts)
 *   vox worktree create|list|remove
 * Keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from files.
 * The database lives at $VOX_HOME/vox.db (default ~/.vox/vox.db).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline/promises';
import { Engine } from '../engine/engine';
import { DEFAULT_MODEL_REF, type ProviderConfig } from '../engine/providers/resolve';
import { parseArgs, UsageError } from './args';
import { runModelCommand } from './model-command';
import { runCheckpointCommand, runWorktreeCommand } from './vcs-commands';
import { DEMO_MODEL_NOTICE, demoModelPath } from '../engine/model/demo-model';

const USAGE = `usage:
  vox chat "prompt" [--model REF] [--thread ID] [--cwd DIR] [--yes] [--json]
  vox threads [--json]
  vox show THREAD_ID [--json]
  vox model path | list | download [NAME|URL]
  vox checkpoint capture|list|diff|restore|undo [--thread T] [--cwd D] [--json]
  vox worktree create SLUG|list|remove PATH [--cwd D] [--json]
models: local:demo (default, offline demo), local:/path/model.gguf, openai:NAME, ollama:NAME, anthropic:NAME`;

/** Walks up from this file to the package root (works from src/ under tsx and from dist/). */
export function packageRoot(start = __dirname): string {
  for (let d = start; ; d = path.dirname(d)) {
    const pj = path.join(d, 'package.json');
    if (fs.existsSync(pj) && (JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'vox') return d;
    if (path.dirname(d) === d) return path.resolve(start, '..');
  }
}

function voxHome(): string {
  return process.env.VOX_HOME ?? path.join(os.homedir(), '.vox');
}

function providerConfig(): ProviderConfig {
  const env = process.env;
  return {
    demoModelPath: demoModelPath(packageRoot()),
    openaiApiKey: env.OPENAI_API_KEY,
    openaiBaseUrl: env.OPENAI_BASE_URL,
    anthropicApiKey: env.ANTHROPIC_API_KEY,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL,
    ollamaBaseUrl: env.OLLAMA_BASE_URL,
    localThreads: env.VOX_LOCAL_THREADS ? Number(env.VOX_LOCAL_THREADS) : undefined,
  };
}

function openEngine(cwd: string, checkpoints = true): Engine {
  return new Engine({ dbPath: path.join(voxHome(), 'vox.db'), workspaceRoot: fs.realpathSync(cwd), providers: providerConfig(), checkpoints });
}

async function chat(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, { model: 'string', thread: 'string', cwd: 'string', yes: 'boolean', json: 'boolean' });
  const prompt = positional.join(' ').trim();
  if (!prompt) throw new UsageError('vox chat needs a prompt');
  const engine = openEngine(String(flags.cwd ?? process.cwd()));
  const modelRef = String(flags.model ?? process.env.VOX_MODEL ?? DEFAULT_MODEL_REF);
  const model = engine.models.resolve(modelRef);
  if (modelRef === 'local:demo' && !flags.json) process.stderr.write(`[vox] ${DEMO_MODEL_NOTICE}\n`);
  const rl = process.stdin.isTTY && !flags.yes ? readline.createInterface({ input: process.stdin, output: process.stderr }) : null;
  engine.gate.onPending(async (req) => {
    if (flags.yes) return engine.gate.respond(req.callId, 'approved');
    if (!rl) {
      process.stderr.write(`[vox] denied ${req.toolName} (no terminal to ask; pass --yes to allow)\n`);
      return engine.gate.respond(req.callId, 'denied');
    }
    const answer = await rl.question(`[vox] allow ${req.toolName} ${req.argumentsJson}? [y/N] `);
    engine.gate.respond(req.callId, /^y(es)?$/i.test(answer.trim()) ? 'approved' : 'denied');
  });
  const handle = engine.runner.startTurn({ threadId: flags.thread as string | undefined, prompt, model });
  const sub = engine.streams.subscribeOrReplay(handle.runId, 0, {
    onChunks(chunks) {
      for (const c of chunks) {
        if (flags.json) process.stdout.write(JSON.stringify(c) + '\n');
        else if (c.kind === 'text') process.stdout.write(c.data);
        else if (c.kind === 'toolCall') process.stderr.write(`\n[tool] ${(JSON.parse(c.data) as { name: string }).name}\n`);
      }
    },
  });
  for (const c of sub.replay) if (c.kind === 'text' && !flags.json) process.stdout.write(c.data);
  const onSignal = () => handle.cancel();
  process.once('SIGINT', onSignal);
  const result = await handle.done;
  process.off('SIGINT', onSignal);
  sub.unsubscribe();
  rl?.close();
  if (flags.json) process.stdout.write(JSON.stringify({ type: 'result', ...result }) + '\n');
  else {
    process.stdout.write('\n');
    process.stderr.write(`[vox] thread ${result.threadId} · ${result.status}${result.error ? ` · ${result.error}` : ''}\n`);
  }
  await engine.dispose();
  return result.status === 'completed' ? 0 : result.status === 'cancelled' ? 130 : 1;
}

async function threads(argv: string[], show: boolean): Promise<number> {
  const { positional, flags } = parseArgs(argv, { json: 'boolean' });
  const engine = openEngine(process.cwd());
  try {
    if (show) {
      const id = positional[0];
      if (!id) throw new UsageError('vox show needs a thread id');
      const t = engine.store.getThread(id);
      const msgs = engine.store.activePath(id);
      if (flags.json) process.stdout.write(JSON.stringify({ thread: t, messages: msgs, runs: engine.store.runs(id) }, null, 2) + '\n');
      else for (const m of msgs) process.stdout.write(`${m.role}${m.status === 'complete' ? '' : ` (${m.status})`}: ${m.content}\n\n`);
      return 0;
    }
    const list = engine.store.listThreads();
    if (flags.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n');
    else for (const t of list) process.stdout.write(`${t.id}\t${new Date(t.updatedAt).toISOString()}\t${t.title}\n`);
    return 0;
  } finally {
    await engine.dispose();
  }
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'chat') return await chat(rest);
    if (cmd === 'threads') return await threads(rest, false);
    if (cmd === 'show') return await threads(rest, true);
    if (cmd === 'model') return await runModelCommand(rest, packageRoot());
    if (cmd === 'checkpoint') return await runCheckpointCommand(rest, (cwd) => openEngine(cwd, false));
    if (cmd === 'worktree') return await runWorktreeCommand(rest);
    if (cmd === undefined || cmd === 'help' || cmd === '--help') {
      process.stdout.write(USAGE + '\n');
      return cmd === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown command "${cmd}"`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`vox: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    const err = e as Error & { code?: string };
    process.stderr.write(`vox: ${err.name ?? 'Error'}${err.code ? ` (${err.code})` : ''}: ${err.message}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
