/**
 * Chunked loading of the thread list (webview/src/lib/thread-list-loader.ts, SPEC §5.4): against a
 * fake engine that pages a sorted list of 5,000 threads exactly as `listThreadsPage` does
 * (newest first, an opaque cursor) and a manual clock: the first 16 at once, then pages of 200
 * every 50 ms — never before the pause, never two requests at a time; a refresh asked for while a
 * page is on its way goes after it; pages merge by id (an updated thread moves up, nothing
 * duplicates); a saved list restores complete and a pass re-validates it (a thread deleted
 * elsewhere goes, one updated during the pass stays); child-thread loads one per thread at a time;
 * the saved copy is encoded again only after a change.
 */
import { strict as assert } from 'node:assert';
import { createModel, type AppModel } from '../../webview/src/lib/app-model';
import { MAX_SAVED_THREAD_ROWS, THREAD_LIST_CHUNK, THREAD_LIST_CHUNK_INTERVAL_MS, THREAD_LIST_FIRST_PAGE, THREAD_LIST_STALE_MS, ThreadListLoader } from '../../webview/src/lib/thread-list-loader';
import type { ClientCommand, ThreadSummary } from '../../src/protocol/commands';
import { ManualClock } from '../support/manual-clock';

const N = 5_000;

interface Sent { command: ClientCommand; extra: { walk?: number; parentId?: string }; at: number }

function rows(n: number, t0 = 1_000_000): ThreadSummary[] {
  return Array.from({ length: n }, (_, i) => ({ id: `t${String(i).padStart(5, '0')}`, title: `Thread ${i}`, createdAt: t0 - i, updatedAt: t0 - i, lastSeq: 1 }));
}

/** The engine's paging: newest first (updatedAt desc, id), `before` = the last row's position. */
function page(all: ThreadSummary[], limit: number, before?: string) {
  const sorted = [...all].sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
  const start = before === undefined ? 0 : sorted.findIndex((t) => t.id === before) + 1;
  const threads = sorted.slice(start, start + limit);
  return { threads, nextCursor: start + limit < sorted.length ? threads[threads.length - 1]!.id : null };
}

function setup(all: ThreadSummary[]) {
  const clock = new ManualClock();
  clock.now = 2_000_000;
  const model: AppModel = createModel();
  const sent: Sent[] = [];
  const loader = new ThreadListLoader({
    model,
    send: (command, extra) => void sent.push({ command, extra, at: clock.now }),
    schedule: (fn, ms) => {
      const h = clock.setTimeout(fn, ms);
      return { cancel: () => clock.clearTimeout(h) };
    },
    now: () => clock.now,
  });
  /** Answers the oldest unanswered listThreads from the engine's list. */
  let answered = 0;
  const answer = (): Sent => {
    const s = sent.filter((x) => x.command.type === 'listThreads')[answered++]!;
    const c = s.command as Extract<ClientCommand, { type: 'listThreads' }>;
    loader.onPage(s.extra.walk, page(all, c.limit!, c.before));
    return s;
  };
  const lists = () => sent.filter((x) => x.command.type === 'listThreads');
  return { clock, model, sent, loader, answer, lists };
}

describe('thread list: chunked loading', () => {
  it(`loads ${N} threads: ${THREAD_LIST_FIRST_PAGE} at once, then pages of ${THREAD_LIST_CHUNK} every ${THREAD_LIST_CHUNK_INTERVAL_MS} ms, one request at a time`, () => {
    const all = rows(N);
    const { clock, model, loader, answer, lists } = setup(all);
    loader.start();
    assert.equal(lists().length, 1);
    assert.deepEqual(lists()[0]!.command, { type: 'listThreads', limit: THREAD_LIST_FIRST_PAGE });
    answer();
    assert.deepEqual(model.threads.map((t) => t.id), all.slice(0, 16).map((t) => t.id), 'the newest 16 show at once');
    assert.equal(model.threadsLoaded, true);
    clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS - 1);
    assert.equal(lists().length, 1, 'nothing before the pause');
    clock.advance(1);
    assert.equal(lists().length, 2);
    assert.deepEqual(lists()[1]!.command, { type: 'listThreads', limit: THREAD_LIST_CHUNK, before: all[15]!.id });
    clock.advance(10 * THREAD_LIST_CHUNK_INTERVAL_MS);
    assert.equal(lists().length, 2, 'no second request while one is on its way');
    let pages = 1;
    while (loader.loading) {
      answer();
      const answeredAt = clock.now;
      pages++;
      assert.equal(model.threads.length, Math.min(N, 16 + (pages - 1) * THREAD_LIST_CHUNK), 'rows grow by one page');
      if (!loader.loading) break;
      assert.equal(lists().length, pages, 'the next page waits for the pause');
      clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
      assert.equal(lists().length, pages + 1);
      assert.equal(lists().at(-1)!.at - answeredAt, THREAD_LIST_CHUNK_INTERVAL_MS, 'asked for one pause after the previous answer');
    }
    assert.equal(pages, 1 + Math.ceil((N - 16) / THREAD_LIST_CHUNK));
    assert.deepEqual(model.threads.map((t) => t.id), all.map((t) => t.id), 'every thread, in order, none twice');
    assert.equal(model.threadsCursor, null);
    clock.advance(1_000);
    assert.equal(lists().length, pages, 'done: no more requests');
  });

  it('a refresh asked for while a page is on its way goes after it, and merges by id (an updated thread moves up)', () => {
    const all = rows(600);
    const { clock, model, loader, answer, lists } = setup(all);
    loader.start();
    answer();
    clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS); // page 2 on its way
    all[300]!.updatedAt = clock.now + 5; // a run ended in an old thread
    loader.refresh();
    loader.refresh();
    assert.equal(lists().length, 2, 'the refresh waits');
    answer(); // page 2 (rows 16..215, from the list as it was when asked… it is paged now: t300 moved up)
    assert.equal(lists().length, 3, 'the refresh goes at once after it');
    assert.deepEqual(lists()[2]!.command, { type: 'listThreads', limit: THREAD_LIST_FIRST_PAGE }, 'one refresh for the two asks');
    answer();
    assert.equal(model.threads[0]!.id, 't00300', 'the updated thread is on top');
    while (loader.loading) {
      clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
      answer();
    }
    assert.equal(new Set(model.threads.map((t) => t.id)).size, model.threads.length, 'no duplicates');
    assert.equal(model.threads.length, 600);
  });

  it('a saved list restores complete; the pass drops a thread deleted elsewhere but keeps one updated meanwhile', () => {
    const all = rows(1_000);
    const first = setup(all);
    first.loader.start();
    first.answer();
    while (first.loader.loading) {
      first.clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
      first.answer();
    }
    const saved = first.loader.savedJson();
    assert.ok(saved && JSON.parse(saved).length === 1_000);
    assert.equal(first.loader.savedJson(), saved, 'not encoded again without a change');

    const gone = all.splice(500, 1)[0]!; // deleted in another window
    const second = setup(all);
    second.loader.restore(saved);
    assert.equal(second.model.threads.length, 1_000, 'the whole list shows at once, before any request is answered');
    assert.equal(second.model.threadsLoaded, true);
    second.loader.start();
    second.answer();
    assert.equal(second.model.threads.length, 1_000, 'the first page does not shorten the list');
    // A thread created in another window during the pass, newer than the pass's start, is kept
    // even though the pass (past the head) never sees it.
    const created: ThreadSummary = { id: 'new', title: 'new', createdAt: second.clock.now + 1, updatedAt: second.clock.now + 1, lastSeq: 1 };
    second.model.threads = [created, ...second.model.threads];
    while (second.loader.loading) {
      second.clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
      second.answer();
    }
    assert.equal(second.model.threads.some((t) => t.id === gone.id), false, 'the deleted thread left at the end of the pass');
    assert.equal(second.model.threads.some((t) => t.id === 'new'), true);
    assert.equal(second.model.threads.length, 1_000);
    assert.notEqual(second.loader.savedJson(), saved, 'the changed list is encoded again');
  });

  it('the saved copy holds at most MAX_SAVED_THREAD_ROWS rows; a broken saved list is ignored', () => {
    const { model, loader } = setup([]);
    model.threads = rows(MAX_SAVED_THREAD_ROWS + 5);
    assert.equal(JSON.parse(loader.savedJson()!).length, MAX_SAVED_THREAD_ROWS);
    const other = setup([]);
    other.loader.restore('{not json');
    other.loader.restore(JSON.stringify([{ id: 1 }, 'x']));
    assert.deepEqual(other.model.threads, []);
    assert.equal(other.model.threadsLoaded, false);
  });

  it('a failed page stops the pass and keeps the rows; a new engine session starts it again', () => {
    const all = rows(500);
    const { clock, model, loader, answer, lists } = setup(all);
    loader.start();
    answer();
    clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
    loader.onError(lists()[1]!.extra.walk);
    assert.equal(loader.loading, false);
    assert.equal(model.threads.length, 16);
    clock.advance(1_000);
    assert.equal(lists().length, 2, 'no retry loop');
    loader.reconnected();
    assert.deepEqual(lists()[2]!.command, { type: 'listThreads', limit: THREAD_LIST_FIRST_PAGE }, 'the first page again');
  });

  it(`a request unanswered for ${THREAD_LIST_STALE_MS} ms counts as lost: a refresh goes; the late answer still merges`, () => {
    const all = rows(50);
    const { clock, model, loader, lists } = setup(all);
    loader.start(); // never answered (yet)
    loader.refresh();
    assert.equal(lists().length, 1, 'waits for the first');
    clock.advance(THREAD_LIST_STALE_MS);
    loader.refresh();
    assert.equal(lists().length, 2, 'the first counts as lost');
    const [lost, head] = lists();
    loader.onPage(head!.extra.walk, page(all, 16));
    assert.equal(model.threads.length, 16);
    loader.onPage(lost!.extra.walk, page(all, 16)); // the late answer of the lost one: merged
    // Answer whatever is asked, one at a time, until the pass is done.
    let answered = 2;
    for (let guard = 0; loader.loading && guard < 20; guard++) {
      clock.advance(THREAD_LIST_CHUNK_INTERVAL_MS);
      const waiting = lists().slice(answered);
      assert.ok(waiting.length <= 1, `${waiting.length} requests at once`);
      for (const s of waiting) {
        const c = s.command as Extract<ClientCommand, { type: 'listThreads' }>;
        loader.onPage(s.extra.walk, page(all, c.limit!, c.before));
        answered++;
      }
    }
    assert.deepEqual(model.threads.map((t) => t.id), all.map((t) => t.id), 'every thread once');
    assert.equal(loader.loading, false);
  });

  it('child threads: one load per thread at a time', () => {
    const { sent, loader } = setup([]);
    assert.equal(loader.loadChildren('p1'), true);
    assert.equal(loader.loadChildren('p1'), false, 'already on its way');
    assert.equal(loader.loadChildren('p2'), true);
    loader.childrenSettled('p1');
    assert.equal(loader.loadChildren('p1'), true);
    assert.deepEqual(sent.map((s) => [s.command.type, s.extra.parentId]), [['listChildThreads', 'p1'], ['listChildThreads', 'p2'], ['listChildThreads', 'p1']]);
  });
});
