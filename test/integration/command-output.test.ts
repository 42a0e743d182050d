/**
 * Live command output in a real engine turn (SPEC 2.2): run_command's output streams into the
 * turn as `commandOutput` chunks — terminal-normalised, merged into frames, colours kept as
 * normalised SGR — and the tool result the model and the transcript get is the normalised plain
 * text, so a progress bar redrawn hundreds of times is its last state. Real shell, real SQLite,
 * a real OpenAI-wire server.
 */
import { strict as assert } from 'node:assert';
import { commandOutputData } from '../../src/protocol/chunks';
import { applyUpdate, emptyView, styledSpans } from '../../src/protocol/terminal';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** Frames the progress script draws. */
const FRAMES = 300;

describe('run_command output in a turn: live, normalised, bounded', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  it('a progress bar streams as a few frames, collapses to its last state for the model, and keeps its colours for views', async () => {
    // 300 redraws of one line over ~1.5 s, then a red word and a last line.
    const script = `i=0; while [ $i -le ${FRAMES} ]; do printf '\\rprogress %3d%%' $((i*100/${FRAMES})); i=$((i+1)); sleep 0.005; done; printf '\\n\\033[31mred\\033[0m done\\n'`;
    server = await startFakeOpenAI({ responses: [toolCallTurn([{ name: 'run_command', args: { command: script } }]), textTurn('finished')] });
    const host = openaiHost(server, { execute: 'auto' });
    t = startTestEngine({ dir, host });
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'show progress' });
    await waitFor('the run', 30_000, async () => (await c.call('getThread', { threadId })).runs[0]?.status === 'completed', 20);

    const s = VoxStore.open(t.dbPath, { readonly: true });
    const item = s.items(runId!).find((i) => i.kind === 'toolCall')!;
    const chunks = s.chunksAfter(runId!, 0).filter((x) => x.kind === 'commandOutput');
    s.close();
    assert.equal(item.content, 'progress 100%\nred done\n[exit code 0]', 'the transcript has the normalised text');
    const toModel = (server.requests[1]!.body.messages as { role: string; content: string }[]).at(-1)!;
    assert.equal(toModel.content, item.content, 'the model got the same');

    assert.ok(chunks.length >= 2, `live frames were streamed (${chunks.length})`);
    assert.ok(chunks.length < FRAMES / 5, `${chunks.length} chunks for ${FRAMES} redraws: merged into frames`);
    const view = emptyView();
    for (const ch of chunks) {
      const d = commandOutputData(JSON.parse(ch.data));
      assert.equal(d.itemId, item.id);
      applyUpdate(view, d.update);
    }
    const lines = [...view.frozen, ...view.live];
    assert.deepEqual(lines.map((l) => styledSpans(l)[0]!.map((sp) => sp.text).join('')), ['progress 100%', 'red done']);
    const red = styledSpans(lines[1]!)[0]!.find((sp) => sp.text === 'red');
    assert.equal(red?.fg, 1, 'the colour is kept for views (ANSI red)');
  });

  it('output beyond the tail bound is cut from the start with a note; the model sees the end', async () => {
    server = await startFakeOpenAI({ responses: [toolCallTurn([{ name: 'run_command', args: { command: 'seq 1 30000' } }]), textTurn('ok')] });
    const host = openaiHost(server, { execute: 'auto' });
    t = startTestEngine({ dir, host });
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'count' });
    await waitFor('the run', 30_000, async () => (await c.call('getThread', { threadId })).runs[0]?.status === 'completed', 20);
    const s = VoxStore.open(t.dbPath, { readonly: true });
    const item = s.items(runId!).find((i) => i.kind === 'toolCall')!;
    s.close();
    assert.match(item.content, /^\[terminal: \d+ earlier lines cut \(\d+ characters\)\]\n/);
    assert.match(item.content, /\n29999\n30000\n\[exit code 0\]$/);
    const toModel = (server.requests[1]!.body.messages as { role: string; content: string }[]).at(-1)!.content;
    assert.match(toModel, /\n30000\n\[exit code 0\]$/, 'the model sees the last lines');
  });
});
