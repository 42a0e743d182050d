/**
 * Threads: the open thread's title and deletion (thread.created, thread.renamed,
 * thread.deleted: a deleted open thread is left), the thread list in chunks (`threadList`,
 * ../thread-list-loader.ts: started with the controller, re-read for a new engine session and
 * whenever a run ends, saved with the webview state), subagent threads under a row, and rename
 * and delete.
 */
import { MAX_TITLE_CHARS } from '../../../../src/protocol/commands/index';
import { ThreadListLoader } from '../thread-list-loader';
import { defineFeature } from './feature';

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
      start: () => threadList.start(),
      reconnected: () => threadList.reconnected(), // maybe a new session: the old one's list requests are lost
      eventsApplied(thread) {
        if (!thread.deleted) return;
        ctx.closeThread();
        intents.loadThreads();
        ctx.persistNow();
      },
      runsEnded: () => intents.loadThreads(), // updatedAt moved
      dispose: () => threadList.dispose(),
      saved: threadList,
    };
  },
});
