/**
 * A subagent's title is the model's title (or its task) on one line, cut to SUBAGENT_TITLE_CHARS
 * by code point: a title of emoji cut at the limit keeps every pair whole and ends with an
 * ellipsis, and the job recorded in the store carries the same title.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { BackgroundWork, SUBAGENT_TITLE_CHARS, type ChildRunRequest } from '../../src/engine/runs/background';
import { VoxStore } from '../../src/engine/store/store';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** True when `s` holds a high or low surrogate that is not part of a pair. */
const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

describe('background work: subagent titles', () => {
  let dir: string;
  let store: VoxStore;
  let work: BackgroundWork;
  let asked: ChildRunRequest[];

  beforeEach(() => {
    dir = makeTmpDir();
    store = VoxStore.open(path.join(dir, 'vox.db'));
    store.append({ type: 'thread.created', threadId: 'th_parent', title: 'parent' });
    asked = [];
    work = new BackgroundWork({
      store,
      startChild: (req) => {
        asked.push(req);
        return { threadId: 'th_child', runId: 'run_child', done: new Promise(() => {}), cancel: () => {}, peek: () => '' };
      },
    });
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  const spawn = (title: string) => work.forRun('th_parent', 'run_parent', dir, 'local:demo').spawnSubagent({ task: 'do it', title, awaited: false });

  it('cuts a title of emoji at the limit without splitting a surrogate pair, with an ellipsis', async () => {
    // One ASCII letter first, so that a cut at SUBAGENT_TITLE_CHARS UTF-16 units lands inside a pair.
    const title = `a${'😀'.repeat(SUBAGENT_TITLE_CHARS)}`;
    await spawn(title);
    const got = asked[0]!.title;
    assert.ok(!hasLoneSurrogate(got), `no lone surrogate in ${JSON.stringify(got)}`);
    assert.ok(got.endsWith('…'), got);
    assert.ok(got.length <= SUBAGENT_TITLE_CHARS, `${got.length} UTF-16 units`);
    assert.ok(title.startsWith(got.slice(0, -1)), 'the kept part is the start of the title');
    assert.equal(got, `a${'😀'.repeat((SUBAGENT_TITLE_CHARS - 2) / 2)}…`, 'as many whole emoji as fit beside the ellipsis');
    const { handle } = await spawn(`${'😀'.repeat(SUBAGENT_TITLE_CHARS)}`);
    const shown = work.forRun('th_parent', 'run_parent', dir, 'local:demo').status(handle).title;
    assert.equal(shown, `${'😀'.repeat(SUBAGENT_TITLE_CHARS / 2 - 1)}…`, 'a pair that would straddle the cut is left out whole');
  });

  it('keeps a title that fits, on one line', async () => {
    await spawn('  count\n the   files ');
    assert.equal(asked[0]!.title, 'count the files');
  });
});
