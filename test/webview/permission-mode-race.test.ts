/**
 * The mode shown is the mode applied: the webview Controller (what the mode bar calls) against a
 * real engine session (SQLite, the fake OpenAI-compatible server on loopback, messages delivered
 * asynchronously in order). Choosing a mode on an empty thread and sending at once applies that
 * mode to the new thread's very first tool call, without writing the workspace's settings; a
 * stricter mode chosen while a run is in flight applies to that run's next call.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine';
import { TestHost } from '../support/test-engine';
import { Controller, createModel, type AppModel } from '../../webview/src/lib/controller';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';
import { EngineBridge } from './support/engine-bridge';

/** How long the host's settings write takes here (VS Code writes a settings file, then reloads it). */
const SETTINGS_WRITE_MS = 300;
const POLL = { everyMs: 5, timeoutMs: 15_000, failFast: true } as const;

/** A host whose workspace-default write is slow, like VS Code's, and recorded. */
class SlowSettingsHost extends TestHost {
  readonly writes: string[] = [];
  override async setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto'): Promise<void> {
    this.writes.push(mode);
    await new Promise((r) => setTimeout(r, SETTINGS_WRITE_MS));
    await super.setPermissionMode(mode);
  }
}

function onlyRun(model: AppModel) {
  const runs = Object.values(model.thread?.runs ?? {});
  assert.equal(runs.length, 1);
  return runs[0]!;
}

describe('webview ↔ engine: the permission mode chosen is the one applied', function () {
  this.timeout(30_000);
  let dir: string;
  let engine: Engine;
  let server: FakeServer;
  let host: SlowSettingsHost;
  let bridge: EngineBridge;
  const quiet = { warn: () => {}, error: (m: string) => assert.fail(m) };

  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [] });
    host = new SlowSettingsHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, modelChoices: [] });
    engine = createEngine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: fs.realpathSync(dir), demoModelPath: '/nonexistent.gguf' }, host);
    bridge = new EngineBridge(engine);
    bridge.connect();
  });
  afterEach(async () => {
    bridge.dispose();
    await engine.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('Full auto chosen on an empty thread, then an immediate send: the first tool call is not asked, and no settings are written', async () => {
    server.push(toolCallTurn([{ name: 'write_file', args: { path: 'note.txt', content: 'hi' }, id: 'call_w' }]), textTurn('Done.'));
    const model = createModel();
    const c = new Controller(model, bridge.bridge(), quiet);
    c.start();
    c.setPermissionMode('fullAuto'); // what the mode bar does on an empty thread
    model.draft = 'write a note';
    assert.ok(c.sendPrompt());
    await until(() => model.approvals.length > 0 || (!!model.thread && Object.keys(model.thread.runs).length === 1 && onlyRun(model).status !== 'running'), { ...POLL, what: 'an approval or the end of the run' });
    assert.deepEqual(model.approvals.map((a) => a.toolName), [], 'the first call ran without asking');
    assert.equal(onlyRun(model).status, 'completed');
    assert.equal(fs.readFileSync(path.join(dir, 'note.txt'), 'utf8'), 'hi');
    assert.equal(model.thread?.permissionMode, 'fullAuto', 'the thread itself is in Full auto');
    assert.deepEqual(host.writes, [], 'the selector wrote no workspace setting');
    assert.equal(host.permissions?.mode, undefined);
    assert.ok(!bridge.sent.some((m) => m.type === 'setPermissionMode' && m.scope !== 'thread'), 'no workspace-scope command was sent');
    c.dispose();
  });

  it('"Ask every time" chosen while the default is Full auto and a run is in flight: that run\'s next call asks', async () => {
    host.permissions = { mode: 'fullAuto' };
    let reached!: () => void;
    const atSecondCall = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    server.push(
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'a' }, id: 'call_a' }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'b.txt', content: 'b' }, id: 'call_b' }], { holds: [{ afterEvents: 0, release: held, onReached: () => reached() }] }),
      textTurn('Done.'),
    );
    const model = createModel();
    const c = new Controller(model, bridge.bridge(), quiet);
    c.start();
    model.draft = 'write two notes';
    assert.ok(c.sendPrompt());
    await atSecondCall; // the first call ran under Full auto; the model is about to ask for the second
    assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'a');
    assert.equal(model.approvals.length, 0, 'the first call was not asked');
    await until(() => !!model.thread, { ...POLL, what: 'the thread to open' });
    c.setPermissionMode('ask');
    await until(() => model.thread?.permissionMode === 'ask', { ...POLL, what: 'the thread mode to be applied' });
    release();
    await until(() => model.approvals.length === 1, { ...POLL, what: 'the second call to be asked' });
    assert.equal(model.approvals[0]!.toolName, 'write_file');
    assert.ok(!fs.existsSync(path.join(dir, 'b.txt')), 'the stricter mode held the call');
    c.respondToApproval(model.approvals[0]!.callId, 'denied');
    await until(() => onlyRun(model).status !== 'running', { ...POLL, what: 'the run to end' });
    assert.deepEqual(host.writes, []);
    c.dispose();
  });
});
