/**
 * Loading the thread list for thousands of threads (SPEC §5.4): a pass fetches
 * the first THREAD_LIST_FIRST_PAGE threads at once, then the rest in pages of THREAD_LIST_CHUNK
 * every THREAD_LIST_CHUNK_INTERVAL_MS; one request in flight at a time (a refresh of the newest
 * threads asked for meanwhile goes after it, never beside it). Pages merge into the model by
 * thread id, never replacing the list wholesale: rows already shown stay while others arrive, a
 * refresh (a run ended) re-reads only the first page, and a list restored from the saved state (a
 * panel reopened) shows complete at once while a pass re-validates it in the background — a row
 * the pass did not see is dropped at its end unless it changed after the pass began. Child-thread
 * loads (a row's subagents) run at most one per thread at a time.
 *
 * Pure TypeScript, no DOM: the controller gives it `send` (a command with the request's extra
 * fields) and `schedule` (setTimeout in the app, a manual clock in tests), and hands it the
 * answers of its requests.
 */
import { MAX_THREAD_PAGE, type ClientCommand, type CommandResult, type ThreadSummary } from '../../../src/protocol/commands/index';
import type { AppModel } from './app-model';

/** Threads asked for first (what the list shows at once). */
export const THREAD_LIST_FIRST_PAGE = 16;
/** Threads per later page (the protocol's largest page). */
export const THREAD_LIST_CHUNK = MAX_THREAD_PAGE;
/** Pause between two later pages (ms): the list fills without holding the frames it shares with the chat. */
export const THREAD_LIST_CHUNK_INTERVAL_MS = 50;
/**
 * A request unanswered this long (ms) counts as lost (an engine session that went away; a local
 * engine answers a page in milliseconds): the next one may go. Its late answer is still merged.
 */
export const THREAD_LIST_STALE_MS = 2_000;
/** Most rows kept in the saved state (a longer list saves its newest rows; the walk brings the rest). */
export const MAX_SAVED_THREAD_ROWS = 10_000;

export interface LoaderDeps {
  model: AppModel;
  /** Sends `command`; `extra` comes back with its answer (onResult / onError). */
  send(command: ClientCommand, extra: { walk?: number; parentId?: string }): void;
  schedule(fn: () => void, ms: number): { cancel(): void };
  now(): number;
}

/** One pass over the whole list: from the newest thread to the oldest. */
interface Walk {
  id: number;
  /** Thread ids seen in this pass (rows not seen are gone, unless they changed after `startedAt`). */
  seen: Set<string>;
  startedAt: number;
  /** Where the next page starts; null before the first page. */
  cursor: string | null;
}

function sortRows(rows: ThreadSummary[]): ThreadSummary[] {
  return rows.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export class ThreadListLoader {
  /** The pass under way, if any. */
  private walk: Walk | null = null;
  private nextWalkId = 1;
  /** The request of the list on its way (one at a time): its token, what it is for (a pass's id, or `0`: the head), when it went. */
  private inFlight: { token: number; walk: number; at: number } | null = null;
  /** What each request sent (by token) was for, and when it went. */
  private readonly sent = new Map<number, { walk: number; at: number }>();
  /** When the queued head refresh was asked for. */
  private headQueuedAt = 0;
  private nextToken = 1;
  /** A refresh of the head was asked for while a request was on its way: it goes next. */
  private headQueued = false;
  private timer: { cancel(): void } | null = null;
  /** A queued refresh's check for a lost request. */
  private staleTimer: { cancel(): void } | null = null;
  /** Parents whose child threads are being loaded. */
  private readonly childLoads = new Set<string>();
  /** Bumped on every change of `model.threads`, for the saved copy. */
  private version = 0;
  private saved: { version: number; rows: readonly ThreadSummary[] | null; json: string | null } = { version: -1, rows: null, json: null };
  /** listThreads requests sent (tests and the bench read it). */
  requests = 0;

  constructor(private readonly deps: LoaderDeps) {}

  /** The app's loader: real timers and clock. */
  static withTimers(model: AppModel, send: LoaderDeps['send']): ThreadListLoader {
    return new ThreadListLoader({
      model,
      send,
      schedule: (fn, ms) => {
        const h = setTimeout(fn, ms);
        return { cancel: () => clearTimeout(h) };
      },
      now: () => Date.now(),
    });
  }

  /**
   * Starts a pass over the whole list from the newest thread (at start, and when an engine session
   * appears); a pass already under way goes on.
   */
  start(): void {
    if (this.walk) return;
    this.walk = { id: this.nextWalkId++, seen: new Set(), startedAt: this.deps.now(), cursor: null };
    if (!this.busy) this.requestWalk();
  }

  /**
   * The newest threads changed (a run ended, a prompt started a thread, a rename): fetches the
   * first page again — after the request on its way, never beside it. Rows further down stay.
   */
  refresh(): void {
    if (this.busy) {
      if (!this.headQueued) this.headQueuedAt = this.deps.now();
      this.headQueued = true;
      // If the request on its way is never answered, the refresh goes once it counts as lost.
      const at = this.inFlight!.at;
      this.staleTimer?.cancel();
      this.staleTimer = this.deps.schedule(() => {
        this.staleTimer = null;
        if (this.headQueued && !this.busy && this.inFlight?.at === at) {
          this.headQueued = false;
          this.requestHead();
        }
      }, Math.max(0, at + THREAD_LIST_STALE_MS - this.deps.now()));
      return;
    }
    this.requestHead();
  }

  /** A request is on its way and not yet counted as lost. */
  private get busy(): boolean {
    return this.inFlight !== null && this.deps.now() - this.inFlight.at < THREAD_LIST_STALE_MS;
  }

  private send(command: ClientCommand, walk: number): void {
    const token = this.nextToken++;
    this.inFlight = { token, walk, at: this.deps.now() };
    this.sent.set(token, { walk, at: this.inFlight.at });
    if (this.sent.size > 64) this.sent.delete(this.sent.keys().next().value!);
    this.requests++;
    this.deps.send(command, { walk: token });
  }

  /** True while a pass has more pages to fetch. */
  get loading(): boolean {
    return this.walk !== null;
  }

  /** Fetches the pass's next page now instead of after the pause ("More threads"); false when everything is loaded. */
  more(): boolean {
    if (!this.walk) return false;
    if (!this.busy) {
      this.timer?.cancel();
      this.timer = null;
      this.requestWalk();
    }
    return true;
  }

  private requestHead(): void {
    this.send({ type: 'listThreads', limit: THREAD_LIST_FIRST_PAGE }, 0);
  }

  private requestWalk(): void {
    const walk = this.walk!;
    if (walk.cursor === null) this.send({ type: 'listThreads', limit: THREAD_LIST_FIRST_PAGE }, walk.id);
    else this.send({ type: 'listThreads', limit: THREAD_LIST_CHUNK, before: walk.cursor }, walk.id);
  }

  /** Takes the request `token` off the books; what it was for (a pass's id, 0: the head). */
  private settle(token: number | undefined): number | undefined {
    const req = token === undefined ? undefined : this.sent.get(token);
    if (token !== undefined) this.sent.delete(token);
    if (this.inFlight?.token === token) this.inFlight = null;
    // A first page asked for after a refresh was queued answers that refresh too.
    if (req?.walk === 0 && this.headQueued && req.at >= this.headQueuedAt) this.headQueued = false;
    return req?.walk;
  }

  /** The answer to one of our listThreads requests (`token`: the request's, from `send`'s extra `walk`). */
  onPage(token: number | undefined, page: CommandResult<'listThreads'>): void {
    const walkId = this.settle(token);
    const walk = this.walk;
    const head = walkId === 0 || (walk !== null && walk.id === walkId && walk.cursor === null);
    for (const t of page.threads) walk?.seen.add(t.id);
    if (head) this.mergeHead(page);
    else this.merge(page.threads);
    this.deps.model.threadsLoaded = true;
    // A first page is a first page: a pass still waiting for its own goes on from this one.
    const adopt = walkId === 0 && walk !== null && walk.cursor === null;
    if (walk && (walk.id === walkId || adopt)) {
      walk.cursor = page.nextCursor;
      if (page.nextCursor === null) this.finish(walk);
    }
    this.next(head);
  }

  /** A listThreads request failed: a pass stops (the next start begins again); the rows stay. */
  onError(token: number | undefined): void {
    const walkId = this.settle(token);
    this.deps.model.threadsLoaded = true;
    if (this.walk && this.walk.id === walkId) {
      this.walk = null;
      this.deps.model.threadsCursor = null;
    }
    this.next(walkId === 0);
  }

  /**
   * What goes next: the pass's next page (after the pause) and a queued head refresh take turns —
   * after a head answer the pass goes on, after a pass page a queued refresh goes at once — so
   * neither waits for the other to finish.
   */
  private next(lastWasHead: boolean): void {
    if (this.busy) return; // a newer request is on its way: its answer goes on from here
    const w = this.walk;
    this.deps.model.threadsCursor = w?.cursor ?? null;
    if (this.headQueued && !(lastWasHead && w && w.cursor !== null)) {
      this.headQueued = false;
      this.requestHead();
      return;
    }
    if (!w || this.timer) return;
    if (w.cursor === null) {
      this.requestWalk(); // its first page was overtaken by a head request
      return;
    }
    this.timer = this.deps.schedule(() => {
      this.timer = null;
      if (this.walk === w && !this.busy) this.requestWalk();
    }, THREAD_LIST_CHUNK_INTERVAL_MS);
  }

  /** Rows by id: a page's rows replace theirs (an updated thread moves up), others stay. */
  private merge(rows: readonly ThreadSummary[]): void {
    if (rows.length === 0) return;
    const m = this.deps.model;
    const fresh = new Set(rows.map((t) => t.id));
    m.threads = sortRows([...m.threads.filter((t) => !fresh.has(t.id)), ...rows]);
    this.version++;
  }

  /**
   * The first page covers the newest threads down to its last row (everything, without a next
   * cursor): rows of that range it does not hold are gone; older rows stay.
   */
  private mergeHead(page: CommandResult<'listThreads'>): void {
    const m = this.deps.model;
    const last = page.threads[page.threads.length - 1];
    const fresh = new Set(page.threads.map((t) => t.id));
    const covered = (t: ThreadSummary): boolean => page.nextCursor === null || (last !== undefined && t.updatedAt > last.updatedAt);
    const kept = m.threads.filter((t) => !fresh.has(t.id) && !covered(t));
    if (kept.length === m.threads.length && page.threads.length === 0) return;
    m.threads = sortRows([...kept, ...page.threads]);
    this.version++;
  }

  /** End of a pass: rows it did not see are gone (deleted elsewhere), unless they changed after it began. */
  private finish(walk: Walk): void {
    const m = this.deps.model;
    const rows = m.threads.filter((t) => walk.seen.has(t.id) || t.updatedAt >= walk.startedAt);
    if (rows.length !== m.threads.length) {
      m.threads = rows;
      this.version++;
    }
    this.walk = null;
  }

  /** A thread deleted here leaves the list at once. */
  removed(threadId: string): void {
    const m = this.deps.model;
    const rows = m.threads.filter((t) => t.id !== threadId);
    if (rows.length !== m.threads.length) {
      m.threads = rows;
      this.version++;
    }
  }

  /** Loads a row's child threads unless that load is already on its way (one per thread at a time). */
  loadChildren(parentId: string): boolean {
    if (this.childLoads.has(parentId)) return false;
    this.childLoads.add(parentId);
    this.deps.send({ type: 'listChildThreads', threadId: parentId }, { parentId });
    return true;
  }

  /** The child-thread load of `parentId` answered (or failed). */
  childrenSettled(parentId: string): void {
    this.childLoads.delete(parentId);
  }

  /**
   * Maybe a new engine session (an unsolicited settings update): requests of an old one are never
   * answered, so none counts as on its way. A pass under way starts again; otherwise the first page is re-read.
   */
  reconnected(): void {
    this.inFlight = null;
    this.sent.clear();
    this.headQueued = false;
    this.timer?.cancel();
    this.timer = null;
    this.childLoads.clear();
    if (this.walk) {
      this.walk = null;
      this.start();
    } else {
      this.refresh();
    }
  }

  /** Stops the pass (the webview goes away). */
  dispose(): void {
    this.timer?.cancel();
    this.timer = null;
    this.staleTimer?.cancel();
    this.staleTimer = null;
    this.walk = null;
  }

  /** The list as saved with the webview state (JSON, encoded again only after it changed; newest MAX_SAVED_THREAD_ROWS). */
  savedJson(): string | null {
    const rows = this.deps.model.threads;
    // The list is replaced on every change (here, and by the controller's delete): identity and version tell.
    if (this.saved.version !== this.version || this.saved.rows !== rows) {
      this.saved = { version: this.version, rows, json: rows.length === 0 ? null : JSON.stringify(rows.slice(0, MAX_SAVED_THREAD_ROWS)) };
    }
    return this.saved.json;
  }

  /** Puts a saved list into the model (a re-created webview shows it at once; the next pass re-validates it). */
  restore(json: string | null): void {
    if (!json) return;
    try {
      const parsed: unknown = JSON.parse(json);
      if (!Array.isArray(parsed)) return;
      const rows = parsed.filter((t): t is ThreadSummary => typeof t === 'object' && t !== null && typeof (t as ThreadSummary).id === 'string'
        && typeof (t as ThreadSummary).title === 'string' && typeof (t as ThreadSummary).updatedAt === 'number');
      if (rows.length === 0) return;
      this.deps.model.threads = sortRows(rows);
      this.deps.model.threadsLoaded = true;
      this.version++;
      this.saved = { version: this.version, rows: this.deps.model.threads, json };
    } catch {
      // not ours or from an older build: the pass loads the list
    }
  }
}
