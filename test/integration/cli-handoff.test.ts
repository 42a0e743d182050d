/**
 * Context handoff from the `vox` CLI (real processes, fake OpenAI server, one database):
 * `vox chat` on one model, then `vox thread handoff --model <another>` previews the preamble
 * (human and --json), an unknown strategy is a usage error (exit 2), manualContext without text
 * is handoff/manualContextMissing, `vox chat --thread … --model <another>` sends the block, and
 * `vox chat --handoff manualContext --handoff-context …` sends the user's text on the same model.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('vox thread handoff (real processes, fake OpenAI)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    removeTmpDir(dir);
  });

  it('previews the handoff for another model, refuses bad strategies, and the next prompt on that model carries it', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('<think>the user wants a name</think>Call it vox.'), textTurn('Agreed.'), textTurn('Noted.')] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-a' };
    const made = await runVox(['chat', '--cwd', dir, 'name the project'], env);
    assert.equal(made.code, 0, made.err);
    const db = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    const threadId = db.listThreads()[0]!.id;
    assert.equal(db.activePath(threadId)[1]!.content, 'Call it vox.');
    db.close();

    const json = await runVox(['thread', 'handoff', threadId, '--model', 'openai:gpt-b', '--json', '--cwd', dir], env);
    assert.equal(json.code, 0, json.err);
    const p = JSON.parse(json.out) as { model: string; modelChanged: boolean; handoff: { strategy: string; coveredFrom: number; coveredTo: number; sourceModel: string; turnsVerbatim: number; preamble: string } };
    assert.equal(p.model, 'openai:gpt-b');
    assert.equal(p.modelChanged, true);
    assert.deepEqual([p.handoff.strategy, p.handoff.coveredFrom, p.handoff.coveredTo, p.handoff.sourceModel, p.handoff.turnsVerbatim], ['deltaSinceTargetLastSeen', 0, 0, 'openai:gpt-a', 1]);
    assert.match(p.handoff.preamble, /^<context_handoff covered_runs="0\.\.0" source_model="openai:gpt-a" strategy="deltaSinceTargetLastSeen">\n[\s\S]*<assistant>Call it vox\.<\/assistant>[\s\S]*<\/context_handoff>$/);

    const same = await runVox(['thread', 'handoff', threadId, '--json', '--cwd', dir], env);
    assert.equal(same.code, 0, same.err);
    assert.deepEqual(JSON.parse(same.out), { model: 'openai:gpt-a', modelChanged: false, handoff: null });

    const text = await runVox(['thread', 'handoff', threadId, '--model', 'openai:gpt-b', '--strategy', 'fullThreadSummary', '--cwd', dir], env);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /^A prompt on openai:gpt-b: fullThreadSummary, covered_runs 0\.\.0 from openai:gpt-a\n1 turns verbatim, 0 compacted, 0 left out; \d+ tokens, \d+ bytes\n\n<context_handoff /);

    const bad = await runVox(['thread', 'handoff', threadId, '--strategy', 'everything', '--cwd', dir], env);
    assert.equal(bad.code, 2, bad.err);
    assert.match(bad.err, /Allowed choices are deltaSinceTargetLastSeen, forkDeltaSummary, fullThreadSummary, checkpointSummary, manualContext/);
    const manual = await runVox(['thread', 'handoff', threadId, '--model', 'openai:gpt-b', '--strategy', 'manualContext', '--json', '--cwd', dir], env);
    assert.equal(manual.code, 1);
    assert.match(manual.err, /HandoffError \(manualContextMissing\): the manualContext strategy carries your text/);

    const next = await runVox(['chat', '--cwd', dir, '--thread', threadId, '--model', 'openai:gpt-b', 'ok?'], env);
    assert.equal(next.code, 0, next.err);
    const sent = (server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages;
    assert.match(sent.at(-1)!.content, /^<context_handoff covered_runs="0\.\.0" source_model="openai:gpt-a" strategy="deltaSinceTargetLastSeen">[\s\S]*<\/context_handoff>\n\nok\?$/);
    assert.ok(!JSON.stringify(sent).includes('<think>'), 'no think block is resent');

    // A chosen strategy on the same model: vox chat --handoff manualContext --handoff-context.
    const manualChat = await runVox(['chat', '--cwd', dir, '--thread', threadId, '--model', 'openai:gpt-b', '--handoff', 'manualContext', '--handoff-context', 'Names are lower case.', 'fine'], env);
    assert.equal(manualChat.code, 0, manualChat.err);
    const third = (server.requests[2]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!.content;
    assert.match(third, /^<context_handoff covered_runs="0\.\.1" source_model="openai:gpt-b" strategy="manualContext">\n.*\nNames are lower case\.\n<\/context_handoff>\n\nfine$/);
    const badChat = await runVox(['chat', '--cwd', dir, '--thread', threadId, '--handoff', 'all', 'x'], env);
    assert.equal(badChat.code, 2, badChat.err);
  });
});
