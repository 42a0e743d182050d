/**
 * startTurn (src/engine/runs/start-turn.ts) in a real engine with a fake OpenAI server, for the
 * starts no protocol command makes directly: a subagent's child turn (startChildTurn) runs in a
 * new thread listed under its parent; a model that does not resolve is refused before anything
 * is written.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assembleEngine, type Engine } from '../../src/engine/engine';
import type { EngineServices } from '../../src/engine/services';
import { startChildTurn, type TurnStartPorts } from '../../src/engine/runs/start-turn';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('startTurn outside the commands: a subagent\'s child turn', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let engine: Engine;
  let services: EngineServices;
  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn('parent answer'), textTurn('child answer')] });
    ({ engine, services } = assembleEngine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: fs.realpathSync(dir), demoModelPath: '/nonexistent.gguf' }, openaiHost(server)));
  });
  afterEach(async () => {
    await engine.dispose();
    await server.close();
    removeTmpDir(dir);
  });
  const ports = (): TurnStartPorts & { limitsOf: EngineServices['permissions']['childLimits'] } => ({
    store: services.store, runs: services.runs, resolveModel: (ref) => services.providers.resolve(ref), defaultModel: () => services.host.model(),
    limitsOf: (threadId, runId) => services.permissions.childLimits(threadId, runId),
  });

  it('starts the task in a new thread under its parent, as a subagent run, on the model asked', async () => {
    const parent = services.runs.start({ prompt: 'the parent', model: await services.providers.resolve('openai:gpt-test') });
    await parent.done;
    const child = await startChildTurn(ports(), { parentThreadId: parent.threadId, parentRunId: parent.runId, task: 'count the files', title: 'Count', workspaceRoot: fs.realpathSync(dir), model: 'openai:gpt-test' });
    assert.equal((await child.done).text, 'child answer');
    const thread = services.store.getThread(child.threadId);
    assert.equal(thread.parentThreadId, parent.threadId);
    assert.equal(thread.title, 'Count');
    assert.deepEqual(services.store.messages(child.threadId).map((m) => m.content), ['count the files', 'child answer']);
  });

  it('a model that does not resolve is refused with the resolver\'s error; no thread is written', async () => {
    const threads = () => (services.store.db.prepare('SELECT COUNT(*) AS n FROM threads').get() as { n: number }).n;
    const before = threads();
    await assert.rejects(startChildTurn(ports(), { parentThreadId: 't', parentRunId: 'r', task: 'x', title: 'x', workspaceRoot: dir, model: 'nope:model' }));
    assert.equal(threads(), before);
  });
});
