/**
 * Threads: the open thread's title and deletion (thread.created, thread.renamed,
 * thread.deleted: a deleted open thread is left), the thread list in chunks (`threadList`,
 * ../thread-list-loader.ts: started with the controller, re-read for a new engine session and
 * whenever a run ends, saved with the webview state), subagent threads under a row, and rename
 * and delete. The list also follows threads changed anywhere else — another window, a `vox chat`
 * in a terminal, both on the one shared database — through `watchThreads` (asked for at start and
 * for every new engine session): a burst of `threadChanged` updates re-reads the first page once.
 */
import { MAX_TITLE_CHARS } from '../../../../src/protocol/commands/index';
import { ThreadListLoader } from '../thread-list-loader';
import { defineFeature } from './feature';

/** How long the list waits after a thread changed before it re-reads its first page (ms): a burst of changes is one request. */
export const THREAD_CHANGE_REFRESH_MS = 400;
/** The changes that move a thread in the list or change its row (a new thread, its title, its deletion, its runs). */
const LIST_CHANGES = new Set(['thread.created', 'thread.renamed', 'thread.deleted', 'run.started', 'run.ended']);

export const threadsFeature = defineFeature({
  name: 'threads',
  events: {
    'thread.created'(state, ev) {
      state.title = ev.title;
    },
    'thread.renamed'(state, ev) {
      state.title = ev.title;
    },
    'thread.deleted'(state) {
      state.deleted = true;
    },
  },
  install(ctx) {
    const m = ctx.model;
    /** The thread list in chunks, merged by id, kept across reopening (../thread-list-loader.ts). */
    const threadList = ThreadListLoader.withTimers(m, (c, extra) => void ctx.send(c, extra));
    let refreshTimer: ReturnType<typeof setTimeout> | null = null;
    const refreshSoon = (): void => {
      if (refreshTimer !== null) return;
      refreshTimer = setTimeout(() => {
        refreshTimer = null;
        threadList.refresh();
      }, THREAD_CHANGE_REFRESH_MS);
    };
    const watch = (): void => void ctx.send({ type: 'watchThreads' });
    const intents = {
      threadList,
      /** Reloads the first page of the thread list (the rows beyond it stay; ../thread-list-loader.ts). */
      loadThreads(): void {
        threadList.refresh();
      },
      /** Loads the subagent threads under `threadId` (the thread list shows them nested), unless that load is on its way. */
      loadChildThreads(threadId: string): void {
        threadList.loadChildren(threadId);
      },
      /** Loads the next chunk of the thread list now, if there is one. */
      loadMoreThreads(): boolean {
        return threadList.more();
      },
      renameThread(threadId: string, title: string): boolean {
        const t = title.trim();
        if (t.length === 0 || t.length > MAX_TITLE_CHARS) return false;
        ctx.send({ type: 'renameThread', threadId, title: t });
        const row = m.threads.find((r) => r.id === threadId);
        if (row) row.title = t;
        return true;
      },
      deleteThread(threadId: string): void {
        ctx.send({ type: 'deleteThread', threadId });
        m.threads = m.threads.filter((r) => r.id !== threadId);
      },
    };
    return {
      intents,
      updates: {
        threadChanged: (u) => {
          if (LIST_CHANGES.has(u.eventType)) refreshSoon();
        },
      },
      results: {
        listThreads: (value, req) => threadList.onPage(req.walk, value),
        listChildThreads(value, req) {
          if (!req.parentId) return;
          threadList.childrenSettled(req.parentId);
          m.childThreads[req.parentId] = value.threads;
        },
        renameThread: () => intents.loadThreads(),
        deleteThread: () => intents.loadThreads(),
      },
      errors: {
        listThreads(_u, req) {
          threadList.onError(req.walk);
        },
        listChildThreads(_u, req) {
          if (req.parentId) threadList.childrenSettled(req.parentId);
        },
      },
      start: () => {
        threadList.start();
        watch();
      },
      reconnected: () => {
        threadList.reconnected(); // maybe a new session: the old one's list requests are lost
        watch();
      },
      eventsApplied(thread) {
        if (!thread.deleted) return;
        ctx.closeThread();
        intents.loadThreads();
        ctx.persistNow();
      },
      runsEnded: () => intents.loadThreads(), // updatedAt moved
      dispose: () => {
        if (refreshTimer !== null) clearTimeout(refreshTimer);
        threadList.dispose();
      },
      saved: threadList,
    };
  },
});
