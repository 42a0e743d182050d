/**
 * One sample of bench/activation.ts, in a fresh process: requires the extension bundle (with the
 * `vscode` stand-in), calls activate(), then — as the chat view does on the first prompt — asks
 * the EngineHost for its client, sends a prompt to the demo model and waits for the first
 * streamed text. `--eager` starts the engine inside the activation instead (the baseline: an
 * extension that starts its engine on activation). `--prepare` sends `prepareModel` first and
 * waits for it, as the chat view does when it opens (the user is still typing), so the prompt
 * finds the model loaded. Prints one JSON line of milliseconds.
 *
 *   node --import=tsx bench/activation/probe.ts <extension dir> <workspace> <storage> [--eager] [--prepare]
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { installVscodeStub, makeContext } from './vscode-stub';

interface Api {
  activationMs: number;
  loadMs: number | undefined;
  host: {
    get(): Promise<unknown>;
    client(): Promise<{
      call(type: string, params: Record<string, unknown>): Promise<Record<string, string | boolean>>;
      on(type: string, fn: (u: { turnId: string; chunks?: { kind: string; data: string }[]; status?: string }) => void): void;
    }>;
  };
}

const [extensionDir, workspace, storage] = process.argv.slice(2) as [string, string, string];
const eager = process.argv.includes('--eager');
const prepare = process.argv.includes('--prepare');
const root = path.resolve(__dirname, '..', '..');
installVscodeStub(root, workspace);

async function main(): Promise<void> {
  const loadedBefore = Object.keys(require.cache).length;
  const t0 = performance.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(path.join(extensionDir, 'dist', 'extension.js')) as { activate(ctx: unknown): Api };
  const tRequire = performance.now();
  const ctx = makeContext(extensionDir, storage);
  const api = ext.activate(ctx);
  if (eager) await api.host.get();
  const tActivated = performance.now();
  const modulesAtActivation = Object.keys(require.cache).length - loadedBefore;

  const client = await api.host.client();
  const tEngine = performance.now();
  if (prepare) {
    const prepared = await client.call('prepareModel', { model: 'local:demo' });
    if (!prepared.prepared) throw new Error(`prepareModel failed: ${prepared.reason}`);
  }
  const tSend = performance.now();
  const { runId } = (await client.call('sendPrompt', { threadId: null, prompt: 'Say hello.', model: 'local:demo' })) as { runId: string };
  let tFirst = 0;
  const ended = new Promise<string>((resolve) => {
    client.on('turnChunks', (u) => {
      if (u.turnId === runId && !tFirst && u.chunks?.some((c) => c.kind === 'text' && c.data.length > 0)) tFirst = performance.now();
    });
    client.on('turnEnded', (u) => void (u.turnId === runId && resolve(u.status ?? '')));
  });
  await client.call('subscribeTurn', { turnId: runId, afterSeq: 0 });
  const status = await ended;
  if (status !== 'completed' || !tFirst) throw new Error(`demo turn ended ${status} (first text ${tFirst ? 'seen' : 'never seen'})`);
  for (const d of ctx.subscriptions.reverse()) await d.dispose();
  process.stdout.write(
    JSON.stringify({
      requireMs: tRequire - t0,
      activateMs: api.activationMs,
      loadMs: api.loadMs ?? NaN,
      activationMs: tActivated - t0,
      engineMs: tEngine - tActivated,
      firstTokenMs: tFirst - tActivated,
      prepareMs: tSend - tEngine,
      sendToFirstMs: tFirst - tSend,
      modulesAtActivation,
    }) + '\n',
  );
  process.exit(0);
}
main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
