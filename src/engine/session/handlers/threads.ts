/** Handlers of the thread commands (../../../protocol/commands/threads.ts). */
import { withSuggestions } from '../../permissions/always-allow';
import { DEFAULT_THREAD_PAGE } from '../../../protocol/commands/threads';
import { replayChunks } from '../../../protocol/updates';
import { allocate } from '../../ids/ids';
import { usageOf } from '../../store/rows';
import type { HandlerTable } from './types';
import { waitView } from '../../runs/rate-limit';
import { childThreads } from '../../store/family-reads';
import { storedPosture } from '../../runs/registry';
import { StoreError } from '../../store/errors';
import { isShortRef, matchesShortRef, shortIds } from '../../../protocol/short-ids';

/** The workspace key no thread has (a workspace-bound session of a store without a workspace lists nothing). */
const NO_WORKSPACE = '\u0000';

/** Threads a short id names, at most this many listed in its ambiguity error. */
const MAX_AMBIGUOUS_LISTED = 10;

/** Event types that `watchThreads` reports: what changes a thread list, the checkpoints view or a thread's tree (an answer edited in place). */
const WATCHED_PREFIXES = ['thread.', 'checkpoint.', 'run.', 'message.edited'];

type ThreadCommand = 'resolveThreadId' | 'listChildThreads' | 'listThreads' | 'getThread' | 'createThread' | 'subscribeThread' | 'watchThreads' | 'unsubscribe' | 'renameThread' | 'deleteThread';

export const threadHandlers: HandlerTable<ThreadCommand> = {
  resolveThreadId({ services: { store }, session }, cmd) {
    const reachable = (id: string) => !session.scope || session.scope.inScope(id);
    if (store.hasThread(cmd.ref) && reachable(cmd.ref)) return { threadId: cmd.ref };
    if (!isShortRef(cmd.ref)) return { threadId: null };
    const like = `%:${cmd.ref.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = store.db.prepare("SELECT id, title FROM threads WHERE deleted = 0 AND id LIKE ? ESCAPE '\\' ORDER BY updated_at DESC, id").all(like) as { id: string; title: string }[];
    const hits = rows.filter((r) => matchesShortRef(r.id, cmd.ref) && reachable(r.id));
    if (hits.length <= 1) return { threadId: hits[0]?.id ?? null };
    const short = shortIds(hits.map((h) => h.id));
    const named = hits.slice(0, MAX_AMBIGUOUS_LISTED).map((h) => `${short.get(h.id)} (${h.title})`).join(', ');
    throw new StoreError('ambiguousId', `${cmd.ref} names ${hits.length} threads: ${named}${hits.length > MAX_AMBIGUOUS_LISTED ? ', …' : ''}; give more of the id`);
  },
  listChildThreads({ services: { store } }, cmd) {
    store.getThread(cmd.threadId);
    return { threads: childThreads(store.db, cmd.threadId) };
  },
  listThreads({ services, session }, cmd) {
    // A workspace-bound session pages through its workspace's threads only (a store without a workspace has none for it).
    const scoped = session.scope ? { workspace: session.scope.workspace ?? NO_WORKSPACE } : {};
    return services.store.listThreadsPage({ limit: cmd.limit ?? DEFAULT_THREAD_PAGE, ...(cmd.before !== undefined ? { before: cmd.before } : {}), ...scoped });
  },
  getThread({ services: { store } }, cmd) {
    const thread = store.getThread(cmd.threadId);
    const runs = store.runs(cmd.threadId).map((r) => {
      const w = r.status === 'running' ? store.rateLimitWait(r.id) : undefined;
      return {
        id: r.id, threadId: r.threadId, ordinal: r.ordinal, provider: r.provider, model: r.model, status: r.status, userMessageId: r.userMessageId,
        startedAt: r.startedAt, endedAt: r.endedAt, error: r.error, usage: usageOf(r), waiting: w ? waitView(w) : null, posture: storedPosture(r) ?? null,
      };
    });
    return { thread, messages: store.activePath(cmd.threadId), runs };
  },
  createThread({ services: { store } }, cmd) {
    if (cmd.threadId !== undefined && store.hasThread(cmd.threadId)) return { threadId: cmd.threadId, created: false };
    const threadId = cmd.threadId ?? allocate('thread');
    store.append({ type: 'thread.created', threadId, title: cmd.title });
    return { threadId, created: true };
  },
  subscribeThread({ services: { store, gate, workspaceRoot }, session }, cmd) {
    const target = `thread:${cmd.threadId}`;
    session.dropSubscription(target);
    store.getThread(cmd.threadId);
    const sub = store.subscribeThread(cmd.threadId, cmd.afterSeq, (events) => session.send({ type: 'events', threadId: cmd.threadId, events }));
    session.addSubscription(target, sub.unsubscribe);
    // A long replay goes as several messages (../../../protocol/updates.ts replayChunks); live events follow the last.
    for (const chunk of replayChunks(sub.replay)) session.send({ type: 'events', threadId: cmd.threadId, events: chunk.events, ...(chunk.more ? { more: true } : {}) });
    // A client that (re)subscribes — e.g. a webview reloaded while hidden — must see approvals still waiting.
    for (const req of gate.pending(cmd.threadId)) session.send({ type: 'approvalRequested', ...withSuggestions(req, workspaceRoot) });
    return { target };
  },
  watchThreads({ services: { store }, session }) {
    const target = 'threads';
    const sub = store.subscribe(store.lastSeq(), (events) => {
      for (const e of events) {
        if (WATCHED_PREFIXES.some((p) => e.type.startsWith(p))) session.send({ type: 'threadChanged', threadId: e.threadId, eventType: e.type, seq: e.seq });
      }
    });
    session.addSubscription(target, sub.unsubscribe);
    return { target };
  },
  unsubscribe({ session }, cmd) {
    session.dropSubscription(cmd.target);
    return {};
  },
  renameThread({ services: { store } }, cmd) {
    store.append({ type: 'thread.renamed', threadId: cmd.threadId, title: cmd.title });
    return { threadId: cmd.threadId };
  },
  deleteThread({ services: { store } }, cmd) {
    store.append({ type: 'thread.deleted', threadId: cmd.threadId });
    return { threadId: cmd.threadId };
  },
};
