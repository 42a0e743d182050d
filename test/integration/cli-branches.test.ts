/**
 * The conversation tree from the `vox` CLI as real processes on one database: two `vox thread
 * regenerate` and a `vox thread switch` at once (one regenerate wins, the other exits 75 with
 * run/threadBusy, the switch either ran before or was refused; no SQLite error, exactly one new
 * branch), then `thread branches|tree|compare`, `message edit` in place and a refused retry —
 * each with --json.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { heldGate } from '../support/scripted';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('vox thread … / vox message edit (real processes, fake OpenAI)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    removeTmpDir(dir);
  });

  it('two regenerates and a switch at once: one regenerate runs, the other exits 75; then tree, branches, compare, edit, retry refused', async () => {
    const gate = heldGate();
    server = await startFakeOpenAI({ responses: [textTurn('first answer'), textTurn(['second ', 'answer'], { holds: [{ afterEvents: 1, release: gate.held }] })] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-test' };
    const made = await runVox(['chat', '--cwd', dir, 'the question'], env);
    assert.equal(made.code, 0, made.err);
    const db = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    const threadId = db.listThreads()[0]!.id;
    const [question, firstAnswer] = db.activePath(threadId);
    db.close();

    const regens = [1, 2].map(() => runVox(['thread', 'regenerate', threadId, '--json', '--cwd', dir], env));
    const sw = runVox(['thread', 'switch', threadId, firstAnswer!.id, '--json', '--cwd', dir], env);
    // The winning regenerate holds its stream until the other two commands have finished (it cannot finish before).
    let finished = 0;
    for (const p of [...regens, sw]) void p.then(() => ++finished === 2 && gate.release());
    const [a, b] = await Promise.all(regens);
    const s = await sw;
    const results = [a!, b!];
    const all = [...results, s];
    for (const r of all) assert.doesNotMatch(r.err, /SQLITE|constraint|internal/i, r.err);
    assert.deepEqual(results.map((r) => r.code).sort(), [0, 75], results.map((r) => r.err).join('\n---\n'));
    const loser = results.find((r) => r.code === 75)!;
    assert.match(loser.err, /running a turn/);
    assert.equal(JSON.parse(loser.out).error.code, 'threadBusy');
    const winner = JSON.parse(results.find((r) => r.code === 0)!.out.trim().split('\n').at(-1)!) as { runId: string; userMessageId: string; status: string; text: string };
    assert.equal(winner.status, 'completed');
    assert.equal(winner.text, 'second answer');
    assert.ok(s.code === 0 || s.code === 75, s.err);
    if (s.code === 75) assert.match(s.err, /running a turn/);

    const br = await runVox(['thread', 'branches', threadId, '--json', '--cwd', dir], env);
    assert.equal(br.code, 0, br.err);
    const branches = JSON.parse(br.out) as { branchId: string; leafId: string; active: boolean }[];
    assert.deepEqual(branches.map((x) => [x.branchId, x.active]), [['main', false], ['main-root-1', true]]);
    assert.equal(branches[0]!.leafId, firstAnswer!.id);

    const tree = await runVox(['thread', 'tree', threadId, '--cwd', dir], env);
    assert.equal(tree.code, 0, tree.err);
    assert.match(tree.out, new RegExp(`^  ${question!.id} user: the question\\n    ${firstAnswer!.id} assistant: first answer\\n\\* ${winner.userMessageId} user: the question\\n  \\* \\S+ assistant: second answer\\n$`));

    const cmp = await runVox(['thread', 'compare', threadId, branches[0]!.leafId, branches[1]!.leafId, '--json', '--cwd', dir], env);
    assert.equal(cmp.code, 0, cmp.err);
    const c = JSON.parse(cmp.out) as { divergence: { index: number }; finalDiffs: { diff: string }[] };
    assert.equal(c.divergence.index, 0);
    assert.match(c.finalDiffs[0]!.diff, /-first answer\n.*\n\+second answer\n/);

    const edit = await runVox(['message', 'edit', threadId, firstAnswer!.id, 'a', 'better', 'answer', '--json', '--cwd', dir], env);
    assert.equal(edit.code, 0, edit.err);
    assert.deepEqual(JSON.parse(edit.out), { messageId: firstAnswer!.id, edited: true, runId: null });

    const retry = await runVox(['thread', 'retry', threadId, winner.runId, '--cwd', dir], env);
    assert.equal(retry.code, 1);
    assert.match(retry.err, /^vox: BranchError \(notRetryable\): /);

    const after = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    try {
      const msgs = after.messages(threadId);
      assert.deepEqual(msgs.map((m) => `${m.role}: ${m.content}`), ['user: the question', 'assistant: a better answer', 'user: the question', 'assistant: second answer']);
      assert.deepEqual(after.runs(threadId).map((r) => r.status), ['completed', 'completed']);
    } finally {
      after.close();
    }
  });
});
