/**
 * Mocha suite that runs INSIDE a real VS Code extension host, next to the installed Vox.
 *
 * Bundled to CJS by test/e2e/build-suite.mjs (`vscode` and `mocha` external) and loaded through
 * VS Code's test-runner protocol: the module named by `extensionTestsPath` exports `run()`,
 * which resolves when the tests pass and rejects when any fails; the host then exits with 0/1.
 * Two launchers use it:
 *  - test/e2e/run-e2e.mjs: code-server + Chromium, `?payload=[["extensionTestsPath",…]]`;
 *  - test/e2e/run-electron.mjs: @vscode/test-electron with a desktop VS Code (VSCODE_EXECUTABLE).
 *
 * The extension host's console is not forwarded anywhere we can read, so the report goes to a
 * file: $VOX_E2E_REPORT when set, else `report.json` beside this bundle. It is JSON
 * { passed, failed, pending, durationMs, tests: [{ title, state, durationMs, error? }], log }.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import Mocha from 'mocha';
import type { VoxApi } from '../../../src/extension/extension';
import { withTimeout } from '../../support/wait';

const EXTENSION_ID = 'vox-dev.vox';
const REQUIRED_COMMANDS = ['vox.newThread', 'vox.showLogs', 'vox.setApiKey'];

interface TestRecord {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs: number;
  error?: string;
}

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

/** The activated extension's API, or a clear error naming what is missing. */
async function voxApi(): Promise<VoxApi> {
  const ext = vscode.extensions.getExtension<VoxApi>(EXTENSION_ID);
  assert(ext, `extension ${EXTENSION_ID} is not installed in this host`);
  const api = await withTimeout('activate()', 30_000, ext.activate());
  assert(api && typeof api === 'object', `activate() returned ${String(api)}; the suite needs the VoxApi export`);
  return api;
}

/** `note` adds a line to the report's log (printed by the launcher with the results). */
function defineTests(root: Mocha.Suite, note: (line: string) => void): void {
  const suite = Mocha.Suite.create(root, 'Vox in the extension host');
  const test = (title: string, fn: (this: Mocha.Context) => Promise<void> | void, timeoutMs = 30_000): void => {
    const t = new Mocha.Test(title, fn);
    t.timeout(timeoutMs);
    suite.addTest(t);
  };

  test('the extension is installed and activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert(ext, `getExtension('${EXTENSION_ID}') is undefined`);
    await withTimeout('activate()', 30_000, ext.activate());
    assert(ext.isActive, 'extension is not active after activate()');
  });

  test('activation is fast and returns the API', async () => {
    const api = await voxApi();
    assert(typeof api.activationMs === 'number', 'VoxApi.activationMs missing');
    assert(api.activationMs < 1_000, `activation took ${api.activationMs.toFixed(0)} ms (> 1000 ms)`);
    // The bundle's own evaluation too (undefined only for an unbundled build).
    const total = api.activationMs + (api.loadMs ?? 0);
    assert(total < 1_000, `evaluating the bundle + activate() took ${total.toFixed(0)} ms (> 1000 ms)`);
    note(`  activation here: activate() ${api.activationMs.toFixed(1)} ms, evaluating dist/extension.js ${api.loadMs?.toFixed(1) ?? '?'} ms`);
  });

  test('vox.newThread, vox.showLogs and vox.setApiKey are registered', async () => {
    await voxApi();
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = REQUIRED_COMMANDS.filter((c) => !all.has(c));
    assert(missing.length === 0, `not registered: ${missing.join(', ')}`);
  });

  test('every command in contributes.commands is registered', async () => {
    await voxApi();
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const contributed = ((ext.packageJSON as { contributes?: { commands?: { command: string }[] } }).contributes?.commands ?? []).map((c) => c.command);
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((c) => !all.has(c));
    assert(missing.length === 0, `contributed but not registered: ${missing.join(', ')}`);
  });

  test("vox.model defaults to 'local:demo'", () => {
    const cfg = vscode.workspace.getConfiguration('vox');
    const info = cfg.inspect<string>('model');
    assert(info, 'setting vox.model is not contributed');
    assert(info.defaultValue === 'local:demo', `default is ${JSON.stringify(info.defaultValue)}`);
    const effective = info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue ?? info.defaultValue;
    assert(cfg.get('model') === effective, `get('model') = ${JSON.stringify(cfg.get('model'))}, expected ${JSON.stringify(effective)}`);
  });

  test('vox.showLogs runs', async () => {
    await voxApi();
    await withTimeout('vox.showLogs', 10_000, vscode.commands.executeCommand('vox.showLogs'));
  });

  test('SecretStorage round trip through the extension (store, read back, delete)', async () => {
    const host = (await voxApi()).host;
    assert(typeof host.setSecret === 'function' && typeof host.hasSecret === 'function', 'VoxApi.host lacks setSecret/hasSecret');
    const before = await host.hasSecret('anthropic');
    await host.setSecret('anthropic', `sk-ant-e2e-${Date.now()}`);
    assert((await host.hasSecret('anthropic')) === true, 'secret not found after setSecret');
    await host.setSecret('anthropic', undefined);
    assert((await host.hasSecret('anthropic')) === false, 'secret still present after delete');
    assert(before === false, 'a fresh profile already had an anthropic key');
  });

  test('the engine starts in this host (SQLite store, native better-sqlite3)', async () => {
    const api = await voxApi();
    const engine = await withTimeout('engine start', 30_000, api.host.get());
    assert(engine, 'EngineHost.get() returned nothing');
  });

  test('the offline demo model answers a turn (node-llama-cpp, models/vox-demo.gguf)', async () => {
    const api = await voxApi();
    const file = api.host.demoModelFile();
    assert(fs.existsSync(file), `demo model missing at ${file} (pack it into the VSIX: node scripts/make-demo-model.mjs first)`);
    // Through the protocol, as every view does: sendPrompt, then the turn's chunks until it ends.
    const client = await api.host.client();
    const { runId } = await client.call('sendPrompt', { threadId: null, prompt: 'Say hello.', model: 'local:demo' });
    if (runId === null) throw new Error('a prompt in a new thread was queued instead of started');
    let text = '';
    const ended = new Promise<{ status: string; error?: string }>((resolve) => {
      client.on('turnChunks', (u) => {
        if (u.turnId === runId) for (const c of u.chunks) if (c.kind === 'text') text += c.data;
      });
      client.on('turnEnded', (u) => void (u.turnId === runId && resolve(u)));
    });
    await client.call('subscribeTurn', { turnId: runId, afterSeq: 0 });
    try {
      const r = await withTimeout('demo turn', 90_000, ended);
      assert(r.status === 'completed', `turn ended ${r.status}${r.error ? `: ${r.error}` : ''}`);
      assert(text.trim().length > 0, 'the demo model produced no text');
    } catch (e) {
      await client.call('cancelRun', { runId }).catch(() => undefined);
      throw e;
    }
  }, 120_000);
}

export async function run(): Promise<void> {
  const reportFile = process.env.VOX_E2E_REPORT || path.join(__dirname, 'report.json');
  const records: TestRecord[] = [];
  const lines: string[] = [];
  const t0 = Date.now();
  const write = (extra: Record<string, unknown> = {}): void => {
    const passed = records.filter((r) => r.state === 'passed').length;
    const failed = records.filter((r) => r.state === 'failed').length;
    const pending = records.filter((r) => r.state === 'pending').length;
    fs.mkdirSync(path.dirname(reportFile), { recursive: true });
    fs.writeFileSync(reportFile, JSON.stringify({ passed, failed, pending, durationMs: Date.now() - t0, tests: records, log: lines, ...extra }, null, 2));
  };

  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: class {} as unknown as typeof Mocha.reporters.Base });
  defineTests(mocha.suite, (line) => lines.push(line));
  write({ started: true });

  return new Promise<void>((resolve, reject) => {
    let runner: Mocha.Runner;
    try {
      runner = mocha.run((failures) => {
        lines.push(`${records.length} tests, ${failures} failed`);
        write({ finished: true });
        if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
        else resolve();
      });
    } catch (e) {
      lines.push(`mocha crashed: ${(e as Error).stack ?? String(e)}`);
      write({ crashed: true });
      reject(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    runner.on('pass', (t: Mocha.Test) => {
      records.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration ?? 0 });
      lines.push(`  ✓ ${t.title} (${t.duration ?? 0} ms)`);
    });
    runner.on('fail', (t: Mocha.Runnable, err: Error) => {
      records.push({ title: t.fullTitle(), state: 'failed', durationMs: t.duration ?? 0, error: err.stack ?? err.message });
      lines.push(`  ✗ ${t.title}: ${err.message}`);
    });
    runner.on('pending', (t: Mocha.Test) => {
      records.push({ title: t.fullTitle(), state: 'pending', durationMs: 0 });
      lines.push(`  - ${t.title} (skipped)`);
    });
    runner.on('test end', () => write());
  });
}
