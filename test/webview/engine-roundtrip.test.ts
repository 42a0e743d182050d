/**
 * The webview Controller talking to the real engine: a real protocol session over a real engine
 * (SQLite, fake OpenAI server on loopback), with messages structured-cloned and delivered
 * asynchronously in order, as VS Code's postMessage does. Checks that hiding/showing (the host
 * drops its session) and reloading the webview mid-stream neither lose nor double text, and that
 * an approval answered from the webview lets the tool run.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine';
import { ownerGrant } from '../../src/protocol/commands/grants';
import type { ClientCommand } from '../../src/protocol/commands';
import { TestHost } from '../support/test-engine';
import { Controller, createModel, type AppModel } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import { runBlocks, runText } from '../../webview/src/lib/blocks';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { sleep, until } from '../support/wait';

/** Pause between the fake model's SSE events: slow enough to hide and show mid-stream. */
const EVENT_DELAY_MS = 8;
const PIECES = Array.from({ length: 60 }, (_, i) => `w${i}${i % 7 === 0 ? '😀' : ''} `);

/**
 * The extension host's side, like src/extension/chat-view.ts: a protocol session per connection
 * (commands queue while there is none), an unsolicited `settings` update after connecting, and
 * messages structured-cloned and delivered asynchronously in order.
 */
class Host {
  session: ReturnType<Engine['connect']> | null = null;
  state: unknown = undefined;
  actions: HostAction[] = [];
  private queue: unknown[] = [];
  private listener: ((d: unknown) => void) | null = null;

  constructor(private readonly engine: Engine) {}

  /** Creates a session (the old one, if any, is gone), runs queued commands, announces settings. */
  connect(): void {
    this.session?.dispose();
    const session = this.engine.connect((u) => {
      const copy = structuredClone(u);
      setImmediate(() => this.listener?.(copy));
    }, ownerGrant('test webview'));
    this.session = session;
    for (const m of this.queue.splice(0)) session.handle(m);
    const settings = structuredClone({ type: 'settings' as const, ...session.settings() });
    setImmediate(() => this.listener?.(settings));
  }

  disconnect(): void {
    this.session?.dispose();
    this.session = null;
  }

  bridge(): HostBridge {
    return {
      send: (c: ClientCommand) => {
        const copy = structuredClone(c);
        setImmediate(() => (this.session ? this.session.handle(copy) : this.queue.push(copy)));
      },
      sendHostAction: (a) => this.actions.push(a),
      onMessage: (l) => {
        this.listener = l;
        return () => (this.listener = null);
      },
      getState: () => this.state,
      setState: (s) => (this.state = structuredClone(s)),
    };
  }
}

/** The model is polled every 5 ms for 10 s at most; an exception in the condition fails the wait at once. */
const POLL = { everyMs: 5, timeoutMs: 10_000, failFast: true } as const;

/** Visible text of the thread's only run ('' until the run appears). */
function liveText(model: AppModel): string {
  const runs = Object.values(model.thread?.runs ?? {});
  return runs.length === 1 ? runText(runs[0]!) : '';
}

function onlyRun(model: AppModel) {
  const runs = Object.values(model.thread?.runs ?? {});
  assert.equal(runs.length, 1);
  return runs[0]!;
}

describe('webview controller ↔ real engine session', function () {
  this.timeout(30_000);
  let dir: string;
  let engine: Engine;
  let server: FakeServer;
  const quiet = { warn: () => {}, error: (m: string) => assert.fail(m) };

  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [] });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, modelChoices: [] });
    engine = createEngine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: fs.realpathSync(dir), demoModelPath: '/nonexistent.gguf' }, host);
  });
  afterEach(async () => {
    await engine.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('hide and show mid-stream: the host drops its session, the webview resumes from its seqs', async () => {
    server.push(textTurn(PIECES, { eventDelayMs: EVENT_DELAY_MS }));
    const host = new Host(engine);
    host.connect();
    const model = createModel();
    const c = new Controller(model, host.bridge(), quiet);
    c.start();
    model.draft = 'count for me';
    c.sendPrompt();
    await until(() => liveText(model).length > 20, { ...POLL, what: 'some text' });
    c.onVisibilityChange(false);
    host.disconnect();
    const seenWhenHidden = runText(onlyRun(model)).length;
    assert.ok(seenWhenHidden < PIECES.join('').length, 'hidden mid-stream');
    await sleep(EVENT_DELAY_MS * 15);
    assert.equal(runText(onlyRun(model)).length, seenWhenHidden, 'nothing arrives while hidden');
    host.connect();
    c.onVisibilityChange(true);
    await until(() => onlyRun(model).status === 'completed' && onlyRun(model).final !== null, { ...POLL, what: 'the run to end' });
    await sleep(50); // let the last batches and turnEnded land
    assert.equal(runText(onlyRun(model)), PIECES.join(''));
    assert.equal(onlyRun(model).stream.filter((s) => s.kind === 'text').map((s) => (s.kind === 'text' ? s.text : '')).join(''), PIECES.join(''), 'the streamed text itself has no gap or duplicate');
    c.dispose();
    host.disconnect();
  });

  it('the host replaces its engine session mid-stream: the webview resubscribes on its settings update', async () => {
    server.push(textTurn(PIECES, { eventDelayMs: EVENT_DELAY_MS }));
    const host = new Host(engine);
    host.connect();
    const model = createModel();
    const c = new Controller(model, host.bridge(), quiet);
    c.start();
    model.draft = 'count for me';
    c.sendPrompt();
    await until(() => liveText(model).length > 20, { ...POLL, what: 'some text' });
    host.disconnect(); // e.g. the engine host restarted the session; no visibility change
    await sleep(EVENT_DELAY_MS * 10);
    assert.ok(liveText(model).length < PIECES.join('').length, 'cut mid-stream');
    host.connect();
    await until(() => onlyRun(model).status === 'completed' && onlyRun(model).final !== null, { ...POLL, what: 'the run to end' });
    await sleep(50);
    assert.equal(onlyRun(model).stream.map((s) => (s.kind === 'text' ? s.text : '')).join(''), PIECES.join(''));
    assert.equal(runText(onlyRun(model)), PIECES.join(''));
    c.dispose();
    host.disconnect();
  });

  it('reload mid-stream: a new webview restores the saved state and resumes exactly once', async () => {
    server.push(textTurn(PIECES, { eventDelayMs: EVENT_DELAY_MS }));
    const host = new Host(engine);
    host.connect();
    const first = createModel();
    const c1 = new Controller(first, host.bridge(), quiet);
    c1.start();
    first.draft = 'count for me';
    c1.sendPrompt();
    await until(() => liveText(first).length > 30, { ...POLL, what: 'some text' });
    c1.dispose(); // the page goes away (pagehide saves the state)
    host.disconnect();
    await sleep(EVENT_DELAY_MS * 10);
    host.connect();
    const second = createModel();
    const c2 = new Controller(second, host.bridge(), quiet);
    c2.start();
    assert.ok(liveText(second).length > 30, 'restored from the saved state before any message');
    assert.ok(liveText(second).length < PIECES.join('').length, 'reloaded mid-stream');
    await until(() => onlyRun(second).status === 'completed' && onlyRun(second).final !== null, { ...POLL, what: 'the run to end' });
    await sleep(50);
    const streamed = onlyRun(second).stream.map((s) => (s.kind === 'text' ? s.text : '')).join('');
    assert.equal(streamed, PIECES.join(''));
    assert.equal(runText(onlyRun(second)), PIECES.join(''));
    c2.dispose();
    host.disconnect();
  });

  it('an approval answered in the webview lets the tool run; the run shows text, tool, text', async () => {
    server.push(
      toolCallTurn([{ name: 'write_file', args: { path: 'note.txt', content: 'hi' }, id: 'call_w' }], { text: ['Writing it.'] }),
      textTurn(['Done', '.']),
    );
    const host = new Host(engine);
    host.connect();
    const model = createModel();
    const c = new Controller(model, host.bridge(), quiet);
    c.start();
    model.draft = 'write a note';
    c.sendPrompt();
    await until(() => model.approvals.length === 1 && Object.keys(model.thread?.runs ?? {}).length === 1, { ...POLL, what: 'the approval request' });
    const approval = model.approvals[0]!;
    assert.equal(approval.toolName, 'write_file');
    const toolBlock = runBlocks(onlyRun(model)).find((b) => b.kind === 'tool');
    assert.ok(toolBlock && toolBlock.kind === 'tool' && toolBlock.tool.itemId === approval.callId, 'the approval belongs to a tool block on screen');
    c.respondToApproval(approval.callId, 'approved');
    await until(() => onlyRun(model).status === 'completed' && onlyRun(model).final !== null, { ...POLL, what: 'the run to end' });
    await sleep(50);
    assert.equal(fs.readFileSync(path.join(dir, 'note.txt'), 'utf8'), 'hi');
    assert.deepEqual(model.approvals, []);
    const blocks = runBlocks(onlyRun(model));
    assert.deepEqual(blocks.map((b) => (b.kind === 'text' ? b.text : b.kind === 'tool' ? `tool:${b.tool.status}` : b.kind)), ['Writing it.', 'tool:completed', 'Done.']);
    c.dispose();
    host.disconnect();
  });
});
