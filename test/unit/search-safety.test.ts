/**
 * Regular-expression safety: a catastrophic regular expression in `search_text` must never freeze the process. Each
 * call runs in a child process (test/support/tool-child.ts), so that a search that blocks the
 * event loop fails the test instead of hanging the runner: the repro `(a+)+$` over 40 `a`s and a
 * `b` ends by its time budget without ripgrep and at once with it, Stop (abort) and SIGINT cancel
 * it promptly, and the event loop keeps ticking throughout.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ripgrepOnPath } from '../../src/engine/tools/ripgrep';
import { runToolInChild } from '../support/tool-child';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** What a child gets to answer; generous, as the machine is shared (tsx start-up included). */
const CHILD_TIMEOUT_MS = 25_000;
/** A stall longer than this means the search ran on the main thread. */
const MAX_EVENT_LOOP_LAG_MS = 250;
const CATASTROPHIC = '(a+)+$';

describe('search_text: catastrophic regular expressions', function () {
  this.timeout(60_000);
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(makeTmpDir('vox-redos-'));
    fs.writeFileSync(path.join(root, 'evil.txt'), `${'a'.repeat(40)}b\nplain line\n`);
  });
  afterEach(() => removeTmpDir(root));

  it('without ripgrep, the JavaScript regex runs off the main thread and is stopped by its time budget', async () => {
    const out = await runToolInChild({ root, name: 'search_text', args: { query: CATASTROPHIC, regex: true } }, CHILD_TIMEOUT_MS);
    assert.equal(out.error?.code, 'timeout', JSON.stringify(out));
    assert.match(out.error!.message, /evil\.txt/);
    assert.ok(out.maxLagMs < MAX_EVENT_LOOP_LAG_MS, `the event loop stalled for ${out.maxLagMs} ms`);
  });

  it('with ripgrep, the same search runs in its linear-time engine and answers at once', async function () {
    const rg = ripgrepOnPath();
    if (!rg) this.skip();
    const out = await runToolInChild({ root, name: 'search_text', args: { query: CATASTROPHIC, regex: true }, ripgrepPath: rg }, CHILD_TIMEOUT_MS);
    assert.equal(out.content, `No matches for "${CATASTROPHIC}" in ..`, JSON.stringify(out));
    assert.ok(out.maxLagMs < MAX_EVENT_LOOP_LAG_MS, `the event loop stalled for ${out.maxLagMs} ms`);
    const hit = await runToolInChild({ root, name: 'search_text', args: { query: '^(a+)+b$', regex: true }, ripgrepPath: rg }, CHILD_TIMEOUT_MS);
    assert.equal(hit.content, `evil.txt:1: ${'a'.repeat(40)}b`);
  });

  it('with ripgrep, a catastrophic pattern ripgrep refuses (look-ahead) falls back to the time budget', async function () {
    const rg = ripgrepOnPath();
    if (!rg) this.skip();
    const out = await runToolInChild({ root, name: 'search_text', args: { query: `(?=a)${CATASTROPHIC}`, regex: true }, ripgrepPath: rg }, CHILD_TIMEOUT_MS);
    assert.equal(out.error?.code, 'timeout', JSON.stringify(out));
    assert.ok(out.maxLagMs < MAX_EVENT_LOOP_LAG_MS, `the event loop stalled for ${out.maxLagMs} ms`);
  });

  it('Stop (the run signal) cancels it at once, long before the budget', async () => {
    const out = await runToolInChild({ root, name: 'search_text', args: { query: CATASTROPHIC, regex: true }, abortAfterMs: 200 }, CHILD_TIMEOUT_MS);
    assert.equal(out.error?.code, 'cancelled', JSON.stringify(out));
    assert.ok(out.elapsedMs < 1000, `cancelling took ${out.elapsedMs} ms`);
  });

  it('SIGINT (Ctrl-C in the CLI) cancels it at once', async () => {
    const out = await runToolInChild({ root, name: 'search_text', args: { query: CATASTROPHIC, regex: true } }, CHILD_TIMEOUT_MS, (pid) => {
      setTimeout(() => process.kill(pid, 'SIGINT'), 200);
    });
    assert.equal(out.error?.code, 'cancelled', JSON.stringify(out));
    assert.ok(out.elapsedMs < 1000, `cancelling took ${out.elapsedMs} ms`);
  });
});
