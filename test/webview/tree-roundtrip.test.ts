/**
 * The webview's conversation-tree intents against the real engine: a real protocol session over a
 * real engine (SQLite file, the scripted OpenAI server on loopback), messages structured-cloned
 * and delivered asynchronously as VS Code's postMessage does. Regenerate with another model makes
 * a sibling (the server saw the other model and the same prompt), ‹ › switches show either
 * answer, an answer edited in place shows "edited" (also after a reload and after a replay from
 * seq 0), a prompt edited makes a new branch the model answers, and a refusal (switching while
 * the thread runs) reaches the user as a notice.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine';
import { ownerGrant } from '../../src/protocol/commands/grants';
import type { ClientCommand } from '../../src/protocol/commands';
import { TestHost } from '../support/test-engine';
import { Controller, createModel, type AppModel } from '../../webview/src/lib/controller';
import type { HostBridge } from '../../webview/src/lib/host-bridge';
import { runText } from '../../webview/src/lib/blocks';
import { httpError, startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { sleep, until } from '../support/wait';

/** The extension host's side (as src/extension/chat-view.ts): one session, async structured-cloned messages, host actions recorded. */
class Host {
  session: ReturnType<Engine['connect']> | null = null;
  state: unknown = undefined;
  actions: unknown[] = [];
  private listener: ((d: unknown) => void) | null = null;

  constructor(private readonly engine: Engine) {}

  connect(): void {
    this.session?.dispose();
    this.session = this.engine.connect((u) => {
      const copy = structuredClone(u);
      setImmediate(() => this.listener?.(copy));
    }, ownerGrant('test webview'));
    const settings = structuredClone({ type: 'settings' as const, ...this.session.settings() });
    setImmediate(() => this.listener?.(settings));
  }

  bridge(): HostBridge {
    return {
      send: (c: ClientCommand) => {
        const copy = structuredClone(c);
        setImmediate(() => this.session?.handle(copy));
      },
      sendHostAction: (a, args) => this.actions.push([a, args]),
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

/** The runs on the open branch, in order. */
function shownRuns(model: AppModel) {
  const t = model.thread;
  if (!t) return [];
  return t.entries.flatMap((e) => (e.kind === 'run' && t.runs[e.runId] ? [t.runs[e.runId]!] : []));
}

const lastAnswer = (model: AppModel) => {
  const runs = shownRuns(model);
  const run = runs[runs.length - 1];
  return run && run.status !== 'running' && run.final ? runText(run) : null;
};

describe('webview tree intents ↔ real engine session', function () {
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

  it('regenerate with another model, switch ‹ ›, edit an answer in place and a prompt as a new branch', async () => {
    const host = new Host(engine);
    host.connect();
    const model = createModel();
    const c = new Controller(model, host.bridge(), quiet);
    c.start();
    server.push(textTurn('First answer.'));
    model.draft = 'Say something';
    c.sendPrompt();
    await until(() => lastAnswer(model) === 'First answer.', { ...POLL, what: 'the first answer' });
    const first = shownRuns(model)[0]!;
    const u1 = first.userMessageId;

    // Regenerate with another model: a sibling prompt with the same text, answered by gpt-other.
    server.push(textTurn('Second answer.'));
    assert.equal(c.tree.regenerate(first.runId, 'openai:gpt-other'), true);
    await until(() => lastAnswer(model) === 'Second answer.', { ...POLL, what: 'the regenerated answer' });
    const second = shownRuns(model)[0]!;
    assert.notEqual(second.userMessageId, u1);
    assert.match(second.model, /gpt-other$/);
    assert.equal(server.requests.at(-1)!.body?.model, 'gpt-other');
    const lastUser = (server.requests.at(-1)!.body?.messages as { role: string; content: string }[]).filter((m) => m.role === 'user');
    assert.deepEqual(lastUser.map((m) => m.content), ['Say something'], 'the old answer is not in the regenerated request');
    assert.deepEqual(c.tree.siblings(second.userMessageId), { index: 1, count: 2, ids: [u1, second.userMessageId] });
    assert.equal(model.thread!.tree.leafCount, 2);

    // ‹ : back to the first answer; › : the second again.
    assert.equal(c.tree.step(second.userMessageId, -1), true);
    await until(() => lastAnswer(model) === 'First answer.', { ...POLL, what: 'the first branch' });
    assert.equal(c.tree.step(u1, 1), true);
    await until(() => lastAnswer(model) === 'Second answer.', { ...POLL, what: 'the second branch' });

    // Edit the shown answer in place.
    const a2 = second.final!.messageId;
    assert.equal(c.tree.edit(a2, 'Second answer, corrected.'), true);
    await until(() => model.thread!.tree.messages[a2]?.editedAt != null, { ...POLL, what: 'the edit' });
    assert.equal(lastAnswer(model), 'Second answer, corrected.');
    assert.equal(shownRuns(model).length, 1, 'in place: nothing truncated or added');

    // Edit the prompt: a new branch from its parent, which the model answers.
    server.push(textTurn('Third answer.'));
    assert.equal(c.tree.editPrompt(second.userMessageId, 'Say something else'), true);
    await until(() => lastAnswer(model) === 'Third answer.', { ...POLL, what: 'the edited prompt\'s answer' });
    const sentUsers = (server.requests.at(-1)!.body?.messages as { role: string; content: string }[]).filter((m) => m.role === 'user');
    assert.deepEqual(sentUsers.map((m) => m.content), ['Say something else']);
    assert.equal(c.tree.siblings(shownRuns(model)[0]!.userMessageId).count, 3);

    // Compare: the chat asks the extension to open the tab for this thread.
    assert.equal(c.tree.compare(), true);
    assert.deepEqual(host.actions, [['compareBranches', { threadId: model.thread!.threadId }]]);

    // A reload restores the saved tree; a replay from seq 0 rebuilds the same one.
    await sleep(30);
    c.dispose();
    const reloaded = createModel();
    const c2 = new Controller(reloaded, host.bridge(), quiet);
    c2.start();
    assert.notEqual(reloaded.thread!.tree.messages[a2]!.editedAt, null, 'still edited after a reload');
    c2.dispose();
    host.state = undefined;
    const fresh = createModel();
    const c3 = new Controller(fresh, host.bridge(), quiet);
    c3.start();
    c3.openThread(model.thread!.threadId);
    await until(() => lastAnswer(fresh) === 'Third answer.', { ...POLL, what: 'the replay' });
    assert.equal(fresh.thread!.tree.messageCount, 6);
    assert.deepEqual(fresh.thread!.tree.messages[a2]!.content, 'Second answer, corrected.');
    assert.notEqual(fresh.thread!.tree.messages[a2]!.editedAt, null);
    c3.dispose();
  });

  it('a retry of a failed run answers again; switching while the thread runs is refused with a notice', async () => {
    const host = new Host(engine);
    host.connect();
    const model = createModel();
    const c = new Controller(model, host.bridge(), quiet);
    c.start();
    server.push(httpError(400));
    model.draft = 'Try this';
    c.sendPrompt();
    await until(() => shownRuns(model)[0]?.status === 'failed', { ...POLL, what: 'the failure' });
    const failed = shownRuns(model)[0]!;
    server.push(textTurn(['Slow ', 'answer.'], { eventDelayMs: 150 }));
    assert.equal(c.tree.retry(failed.runId), true);
    await until(() => shownRuns(model)[0]?.runId !== failed.runId && shownRuns(model)[0]?.status === 'running', { ...POLL, what: 'the retried run' });
    // The webview would not send it while running; another client might: the engine refuses it.
    host.session!.handle({ type: 'switchBranch', threadId: model.thread!.threadId, toMessageId: failed.userMessageId, requestId: 'x1' });
    await until(() => model.notices.length > 0, { ...POLL, what: 'the refusal as a notice' });
    assert.deepEqual(model.notices.map((n) => n.code), ['threadBusy'], model.notices.map((n) => n.message).join(' | '));
    await until(() => lastAnswer(model) === 'Slow answer.', { ...POLL, what: 'the retried answer' });
    assert.equal(c.tree.siblings(shownRuns(model)[0]!.userMessageId).count, 2);
    c.dispose();
  });
});
