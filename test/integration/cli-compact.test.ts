/**
 * `vox thread compact` as a real process on one database with the fake OpenAI server: `--up-to`
 * with `--json` (the compaction as the protocol returns it, the raw messages unchanged), both
 * flags at once refused (exit 2), a model that answers without the summary shape (exit 1, the
 * typed message, nothing written).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const SUMMARY = '## Goal\nShip it.\n\n## Decisions\n- Small steps.\n\n## Files touched\n- none\n\n## Open items\nNone.';

describe('vox thread compact (real processes, fake OpenAI)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    removeTmpDir(dir);
  });

  it('--up-to --json compacts; both flags exit 2; an answer that is not a summary exits 1 and writes nothing', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('first answer'), textTurn('second answer'), textTurn(SUMMARY), textTurn('no summary here')] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-test' };
    assert.equal((await runVox(['chat', '--cwd', dir, 'one'], env)).code, 0);
    const db = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    const threadId = db.listThreads()[0]!.id;
    db.close();
    assert.equal((await runVox(['chat', '--cwd', dir, '--thread', threadId, 'two'], env)).code, 0);
    const read = () => {
      const s = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
      try {
        return { path: s.activePath(threadId), compactions: s.compactions(threadId) };
      } finally {
        s.close();
      }
    };
    const before = read();
    assert.equal(before.path.length, 4);

    const both = await runVox(['thread', 'compact', threadId, '--up-to', before.path[1]!.id, '--from', before.path[2]!.id, '--cwd', dir], env);
    assert.equal(both.code, 2, both.err);

    const ok = await runVox(['thread', 'compact', threadId, '--up-to', before.path[1]!.id, '--json', '--cwd', dir], env);
    assert.equal(ok.code, 0, ok.err);
    const c = JSON.parse(ok.out) as { mode: string; fromMessageId: string; upToMessageId: string; coveredMessages: number; summary: string; model: string };
    assert.deepEqual([c.mode, c.fromMessageId, c.upToMessageId, c.coveredMessages, c.summary, c.model], ['upTo', before.path[0]!.id, before.path[1]!.id, 2, SUMMARY, 'openai:gpt-test']);
    const after = read();
    assert.deepEqual(after.path, before.path, 'raw messages unchanged');
    assert.equal(after.compactions.length, 1);

    const bad = await runVox(['thread', 'compact', threadId, '--json', '--cwd', dir], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /did not answer with a summary/);
    assert.equal(read().compactions.length, 1, 'nothing written');
  });
});
