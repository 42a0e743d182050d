/**
 * Commands' behaviour flags (src/protocol/commands/define.ts), applied once by the session: a
 * read-only engine refuses every command not declared `readOnly` with `store/readOnly` before its
 * handler runs (and reading ones work); `exclusive` commands with the same key run one after
 * another (src/engine/session/exclusive.ts); error details are declared per domain.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ClientError } from '../../src/client/engine-client';
import { COMMANDS } from '../../src/protocol/commands/index';
import { exclusiveKey } from '../../src/protocol/commands/define';
import { detailFields } from '../../src/protocol/wire/error-details';
import type { EngineServices } from '../../src/engine/services';
import { runExclusive } from '../../src/engine/session/exclusive';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('command flags: readOnly and exclusive, applied by the session', function () {
  this.timeout(60_000);
  let dir: string;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    removeTmpDir(dir);
  });

  it('a read-only engine answers reading commands and refuses writing ones with store/readOnly before the handler', async () => {
    const dbPath = path.join(dir, 'vox.db');
    const writer = startTestEngine({ dir, config: { dbPath } });
    const { threadId } = await writer.client().call('createThread', { title: 'kept' });
    await writer.dispose();
    t = startTestEngine({ dir, config: { dbPath, readOnly: true } });
    const c = t.client();
    assert.deepEqual((await c.call('listThreads', {})).threads.map((x) => x.title), ['kept']);
    assert.equal((await c.call('getThread', { threadId })).thread.title, 'kept');
    const refused = async (p: Promise<unknown>) => {
      const e = await p.then(() => assert.fail('expected a refusal'), (x: unknown) => x);
      assert.ok(e instanceof ClientError && e.is('store', 'readOnly'), String(e));
      assert.match(e.message, /cannot be written/);
    };
    await refused(c.call('renameThread', { threadId, title: 'changed' }));
    await refused(c.call('createThread', { title: 'new' }));
    // Refused before the handler: the handler would have failed first on the model it cannot resolve.
    await refused(c.call('sendPrompt', { threadId, prompt: 'hello', model: 'nope:no-such-model' }));
    assert.deepEqual((await c.call('listPromptHistory', {})).prompts, []);
    assert.equal((await c.call('getThread', { threadId })).thread.title, 'kept');
  });

  it('every command that needs only `read` is declared readOnly; the run-starting ones are exclusive per thread', () => {
    for (const spec of Object.values(COMMANDS)) {
      if (Array.isArray(spec.requires) && spec.requires.length === 1 && spec.requires[0] === 'read') assert.equal(spec.readOnly, true, spec.type);
    }
    for (const type of ['sendPrompt', 'regenerate', 'retry', 'editMessage', 'switchBranch'] as const) assert.equal(COMMANDS[type].exclusive, 'thread', type);
    assert.equal(COMMANDS.sendPrompt.readOnly, undefined);
    assert.equal(exclusiveKey(COMMANDS.sendPrompt, { threadId: 't1' }), 'thread:t1');
    assert.equal(exclusiveKey(COMMANDS.sendPrompt, { threadId: null }), null, 'a new thread has nothing to wait for');
    assert.equal(exclusiveKey(COMMANDS.restoreCheckpoint, { threadId: 't1' }), 'workspace');
    assert.equal(exclusiveKey(COMMANDS.listThreads, {}), null);
  });

  it('exclusive commands with one key run in arrival order, one at a time; a failure does not hold the next; other keys do not wait', async () => {
    const services = {} as EngineServices;
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = runExclusive(services, 'thread:a', async () => {
      log.push('a1 start');
      await held;
      log.push('a1 end');
      throw new Error('a1 failed');
    });
    const second = runExclusive(services, 'thread:a', () => {
      log.push('a2');
      return 2;
    });
    const other = await runExclusive(services, 'thread:b', () => (log.push('b'), 'b'));
    assert.equal(other, 'b');
    assert.deepEqual(log, ['a1 start', 'b'], 'a2 waits for a1; b does not');
    release();
    await assert.rejects(first, /a1 failed/);
    assert.equal(await second, 2);
    assert.deepEqual(log, ['a1 start', 'b', 'a1 end', 'a2']);
    // Another engine's table is its own.
    assert.equal(await runExclusive({} as EngineServices, 'thread:a', () => 'free'), 'free');
  });

  it('error details are declared per domain: the run domain sends runId and threadId, a domain without a declaration sends none', () => {
    assert.deepEqual([...detailFields('run')].sort(), ['runId', 'threadId']);
    assert.deepEqual(detailFields('tool'), []);
    assert.ok(detailFields('worktree').includes('dirtyFiles'));
  });
});
