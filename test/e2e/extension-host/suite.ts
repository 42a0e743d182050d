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
 *
 * Which SQLite driver the store must run on comes from the launcher, through the environment the
 * extension host inherits: $VOX_E2E_SQLITE_DRIVER (better-sqlite3 | photostructure) and
 * $VOX_E2E_SQLITE_REASON (text the driver choice's reason must contain, e.g. the fallback's
 * cause). run-e2e.mjs runs this suite once per pass (better-sqlite3 loadable; made unloadable
 * with VOX_SQLITE_SIMULATE_ABI_MISMATCH=1; absent from the release VSIX). In Electron without
 * them the N-API driver is expected; elsewhere without them that test is skipped.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import Mocha from 'mocha';
import { EngineClient, inProcessTransport } from '../../../src/client/engine-client';
import type { VoxApi } from '../../../src/extension/extension';
import { ownerGrant } from '../../../src/protocol/commands/grants';
import { waitFor, withTimeout } from '../../support/wait';

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

/** The SQLite driver this run expects the store on (see the header), or undefined when it names none. */
function expectedSqlite(): { driver: string; reason: string } | undefined {
  const driver = process.env.VOX_E2E_SQLITE_DRIVER?.trim();
  if (driver) return { driver, reason: process.env.VOX_E2E_SQLITE_REASON ?? '' };
  // Desktop VS Code: a better-sqlite3 built for Node's ABI cannot load in Electron.
  if (process.versions.electron) return { driver: 'photostructure', reason: 'better-sqlite3 does not load here' };
  return undefined;
}

/** Prompts the demo turn test tries before giving up on a reply of more than one delta. */
const DEMO_ATTEMPTS = 3;
/** The file the checkpoint test captures and restores, in the workspace root (removed after). */
const CHECKPOINT_FILE = 'vox-e2e-checkpoint.txt';
/** The file the mention test opens and selects in (removed after). */
const MENTION_FILE = 'vox-e2e-mention.txt';

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

  test('the engine starts in this host (SQLite store)', async () => {
    const api = await voxApi();
    const engine = await withTimeout('engine start', 30_000, api.host.get());
    assert(engine, 'EngineHost.get() returned nothing');
  });

  const want = expectedSqlite();
  const because = want && want.reason !== want.driver ? ` (its reason says "${want.reason}")` : '';
  test(`the store runs on the ${want?.driver ?? 'expected'} SQLite driver${because}`, async function () {
    const engine = await (await voxApi()).host.get();
    note(`  SQLite driver here: ${engine.sqlite.name}: ${engine.sqlite.reason}`);
    if (!want) this.skip(); // no expectation given (neither the launcher nor Electron)
    assert(engine.sqlite.name === want.driver, `engine.sqlite.name is ${engine.sqlite.name}, expected ${want.driver} (reason: ${engine.sqlite.reason})`);
    assert(engine.sqlite.reason.includes(want.reason), `the driver choice's reason ${JSON.stringify(engine.sqlite.reason)} does not mention ${JSON.stringify(want.reason)}`);
    if (want.driver === 'photostructure') {
      // Taken as the fallback, not forced: better-sqlite3 was tried and did not load.
      assert(!engine.sqlite.reason.includes('forced by'), `the N-API driver was forced, not a fallback: ${engine.sqlite.reason}`);
      assert(engine.sqlite.reason.includes('better-sqlite3 does not load here'), `the reason does not name better-sqlite3's failure: ${engine.sqlite.reason}`);
    }
  });

  test('the Vox log names the SQLite driver ("SQLite driver: …")', async () => {
    const api = await voxApi();
    const engine = await api.host.get();
    assert(api.logUri, 'VoxApi.logUri missing');
    const dir = api.logUri.fsPath;
    const expected = `SQLite driver: ${engine.sqlite.reason}`;
    let seen = '';
    // The output channel's file is written asynchronously: wait for the line.
    const line = await waitFor(`"${expected}" in a log file under ${dir}`, 10_000, async () => {
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.log')) : [];
      seen = files.join(', ') || 'none';
      for (const f of files) {
        const hit = fs.readFileSync(path.join(dir, f), 'utf8').split('\n').find((l) => l.includes('SQLite driver: '));
        if (hit) return hit;
      }
      return undefined;
    }, 100).catch((e: Error) => {
      throw new Error(`${e.message} (log files: ${seen})`);
    });
    assert(line.endsWith(expected), `the log says ${JSON.stringify(line)}, expected it to end with ${JSON.stringify(expected)}`);
    if (want) assert(line.includes(`SQLite driver: ${want.driver}`), `the log line names ${JSON.stringify(line)}, not ${want.driver}`);
    note(`  log: ${line.trim()}`);
  });

  /** The demo turn's thread and reply, for the persistence test (undefined until the turn passed). */
  let demo: { threadId: string; prompts: string[]; reply: string } | undefined;

  test('the offline demo model streams a turn (node-llama-cpp, models/vox-demo.gguf, protocol chunks)', async () => {
    const api = await voxApi();
    const file = api.host.demoModelFile();
    assert(fs.existsSync(file), `demo model missing at ${file} (pack it into the VSIX: node scripts/make-demo-model.mjs first)`);
    // Through the protocol, as every view does: sendPrompt, then the turn's chunks until it ends.
    const client = await api.host.client();
    // The bigram model samples its reply length: now and then it stops after one token. A turn
    // streams when its text came as more than one delta from the model; ask again (same thread)
    // up to DEMO_ATTEMPTS times for such a reply. Every reply must complete with text.
    let threadId: string | null = null;
    let replyThread = '';
    const prompts: string[] = [];
    const tries: string[] = [];
    for (let attempt = 1; attempt <= DEMO_ATTEMPTS; attempt++) {
      const prompt = attempt === 1 ? 'Say hello.' : `Say hello again (${attempt}).`;
      const r: { threadId: string; runId: string | null } = await client.call('sendPrompt', { threadId, prompt, model: 'local:demo' });
      threadId = replyThread = r.threadId;
      prompts.push(prompt);
      const runId = r.runId;
      if (runId === null) throw new Error('a prompt in an idle thread was queued instead of started');
      let text = '';
      let maxSeq = 0;
      let others = 0;
      const ended = new Promise<{ status: string; error?: string }>((resolve) => {
        const offChunks = client.on('turnChunks', (u) => {
          if (u.turnId !== runId) return;
          for (const c of u.chunks) {
            maxSeq = Math.max(maxSeq, c.seq);
            if (c.kind === 'text') text += c.data;
            else others++;
          }
        });
        const offEnd = client.on('turnEnded', (u) => {
          if (u.turnId !== runId) return;
          offChunks();
          offEnd();
          resolve(u);
        });
      });
      await client.call('subscribeTurn', { turnId: runId, afterSeq: 0 });
      try {
        const end = await withTimeout('demo turn', 90_000, ended);
        assert(end.status === 'completed', `turn ended ${end.status}${end.error ? `: ${end.error}` : ''}`);
        assert(text.trim().length > 0, 'the demo model produced no text');
      } catch (e) {
        await client.call('cancelRun', { runId }).catch(() => undefined);
        throw e;
      } finally {
        await client.call('unsubscribe', { target: `turn:${runId}` }).catch(() => undefined);
      }
      // Adjacent text chunks are merged on the way out, each carrying the last seq it covers; the
      // other kinds never are. So the model's text deltas are the seqs not taken by other chunks.
      const deltas = maxSeq - others;
      tries.push(`attempt ${attempt}: ${text.length} chars in ${deltas} text delta(s)`);
      if (deltas >= 2) {
        demo = { threadId: replyThread, prompts, reply: text };
        break;
      }
    }
    note(`  demo turn: ${tries.join('; ')}`);
    assert(demo, `no demo reply came as more than one delta (${tries.join('; ')})`);
  }, 240_000);

  test('the thread reads back from the database through a fresh session (getThread, listThreads)', async () => {
    assert(demo, 'not run: the demo turn test failed');
    const engine = await (await voxApi()).host.get();
    // A session of its own, as a new view would open: what it reads comes from the store.
    const fresh = new EngineClient(inProcessTransport((sink) => engine.connect(sink, ownerGrant('e2e fresh session'))), 'e2e');
    try {
      const got = await fresh.call('getThread', { threadId: demo.threadId });
      const users = got.messages.filter((m) => m.role === 'user').map((m) => m.content);
      assert(JSON.stringify(users) === JSON.stringify(demo.prompts), `stored user messages ${JSON.stringify(users)}, expected ${JSON.stringify(demo.prompts)}`);
      const last = got.messages.filter((m) => m.role === 'assistant').pop();
      assert(last, 'no assistant message stored');
      assert(last.content === demo.reply, `stored reply ${JSON.stringify(last.content.slice(0, 80))} differs from the streamed one ${JSON.stringify(demo.reply.slice(0, 80))}`);
      assert(got.runs.length === demo.prompts.length && got.runs.every((r) => r.status === 'completed'), `runs: ${JSON.stringify(got.runs.map((r) => r.status))}`);
      const list = await fresh.call('listThreads', { limit: 50 });
      assert(list.threads.some((t) => t.id === demo!.threadId), `listThreads does not list ${demo.threadId}`);
    } finally {
      fresh.close();
    }
  });

  test('a checkpoint captures the workspace and restores it (captureCheckpoint, listCheckpoints, restoreCheckpoint, undoRestore)', async () => {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert(root, 'no workspace folder open');
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
    const head = git('rev-parse', 'HEAD').trim();
    const file = path.join(root, CHECKPOINT_FILE);
    const client = await (await voxApi()).host.client();
    const { threadId } = await client.call('createThread', { title: 'e2e checkpoint' });
    try {
      fs.writeFileSync(file, 'captured\n');
      const cp = await client.call('captureCheckpoint', { threadId });
      assert(cp.changed.some((c) => c.path === CHECKPOINT_FILE), `the capture did not see ${CHECKPOINT_FILE}: ${JSON.stringify(cp.changed)}`);
      const listed = await client.call('listCheckpoints', { threadId });
      assert(listed.checkpoints.some((c) => c.ordinal === cp.ordinal && c.ref === cp.ref), `listCheckpoints (the store) lacks #${cp.ordinal}: ${JSON.stringify(listed.checkpoints)}`);

      fs.writeFileSync(file, 'changed later\n');
      const restored = await client.call('restoreCheckpoint', { threadId, ordinal: cp.ordinal, mode: 'files' });
      assert(restored.files, 'restoreCheckpoint (files) returned no files result');
      assert(fs.readFileSync(file, 'utf8') === 'captured\n', `after the restore ${CHECKPOINT_FILE} holds ${JSON.stringify(fs.readFileSync(file, 'utf8'))}`);
      const undone = await client.call('undoRestore', { restorePoint: restored.files.restorePoint });
      assert(undone.undone === restored.files.restorePoint, `undoRestore undid ${undone.undone}, expected ${restored.files.restorePoint}`);
      assert(fs.readFileSync(file, 'utf8') === 'changed later\n', `after the undo ${CHECKPOINT_FILE} holds ${JSON.stringify(fs.readFileSync(file, 'utf8'))}`);
      assert(git('rev-parse', 'HEAD').trim() === head, 'HEAD moved');
      note(`  checkpoint #${cp.ordinal} (${cp.ref}) captured in ${cp.tookMs} ms, restored and undone`);
    } finally {
      fs.rmSync(file, { force: true });
      await client.call('deleteThread', { threadId }).catch(() => undefined);
    }
  }, 60_000);

  test('@selection and @problems come from VS Code itself (the editor\'s selection, languages.getDiagnostics) into estimateContext', async () => {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert(root, 'no workspace folder open');
    const file = path.join(root, MENTION_FILE);
    fs.writeFileSync(file, 'first line\nselected line for the mention\nlast line\n');
    const uri = vscode.Uri.file(file);
    const problems = vscode.languages.createDiagnosticCollection('vox-e2e');
    try {
      const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      editor.selection = new vscode.Selection(1, 0, 1, 'selected line for the mention'.length);
      problems.set(uri, [new vscode.Diagnostic(new vscode.Range(0, 0, 0, 5), 'vox e2e problem', vscode.DiagnosticSeverity.Error)]);
      const client = await (await voxApi()).host.client();
      const e = await client.call('estimateContext', { threadId: null, draft: 'explain', model: 'local:demo', mentions: [{ kind: 'selection' }, { kind: 'problems' }, { kind: 'file', target: 'no-such-file.txt' }] });
      const [sel, prob, missing] = e.mentions;
      assert(sel?.status === 'ok' && sel.label === `${MENTION_FILE}:2-2` && sel.tokens > 0, `@selection resolved to ${JSON.stringify(sel)}`);
      assert(prob?.status === 'ok' && prob.tokens > 0, `@problems resolved to ${JSON.stringify(prob)}`);
      assert(missing?.status === 'warning' && missing.warning === 'File not found: no-such-file.txt', `the missing file resolved to ${JSON.stringify(missing)}`);
      note(`  @selection ${sel.tokens} tokens, @problems ${prob.tokens} tokens; the request would be ${e.tokens} tokens of ${e.window ?? '?'}`);
    } finally {
      problems.dispose();
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      fs.rmSync(file, { force: true });
    }
  }, 60_000);
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
