/**
 * Forking a thread into a new thread (../../protocol/commands/forks.ts): the source's path from
 * its root to a message (default: its head) is written again under new ids in one IMMEDIATE
 * transaction — `thread.created` ("Fork of …"), each message, each finished run of a prompt on
 * the path with its turn items (text, reasoning, tool calls with their results, steering
 * prompts, refusal notes) and its end — and each copied tool call that returned an MCP App keeps
 * the app and its saved state (`item.completed {app}` + `mcpApp.stateSaved`, SPEC 5.3). Ids are
 * fresh (thread, messages) or derived from them (runs by ordinal, items by run and ordinal), so
 * nothing of the fork refers to the source and the two threads change independently from then
 * on. Not copied: a run still running (its prompt is), a run whose answer lies after the fork
 * point (forking at a prompt copies the prompt only), checkpoints (git refs of the source
 * thread), compactions and queued prompts.
 */
import { BranchError } from '../../protocol/branches';
import { quote } from '../../protocol/wire/quote';
import { MAX_TITLE_CHARS } from '../../protocol/commands/common';
import { MAX_TREE_MESSAGES } from '../../protocol/commands/branches';
import type { EndedRunStatus, VoxEvent } from '../../protocol/events';
import { allocate, derive, deriveRunFromThreadOrdinal } from '../ids/ids';
import { mcpAppRow } from '../mcp-apps/reads';
import { RunError } from '../runs/errors';
import { storedPosture } from '../runs/registry';
import type { MessageRow, RunRow, TurnItemRow, VoxStore } from '../store/store';
import { usageOf } from '../store/rows';
import { messageOf } from '../branches/service';

/** Most messages a fork copies (the conversation tree's own limit). */
export const MAX_FORK_MESSAGES = MAX_TREE_MESSAGES;
/** What a fork's title starts with. */
export const FORK_TITLE_PREFIX = 'Fork of ';

export interface ForkResult { threadId: string; title: string; messages: number; runs: number; appStates: number }

function forkTitle(title: string): string {
  return quote(`${FORK_TITLE_PREFIX}${title}`, MAX_TITLE_CHARS);
}

function endedStatus(r: RunRow): EndedRunStatus {
  return r.status === 'running' ? 'interrupted' : r.status;
}

/** The item events of one copied item (and the app it returned, with its state). */
function itemEvents(store: VoxStore, threadId: string, runId: string, item: TurnItemRow, itemId: string): { events: VoxEvent[]; states: number } {
  const base = { threadId, runId, itemId, ordinal: item.ordinal };
  if ((item.kind as string) === 'steer') {
    return { events: [{ type: 'run.steered', ...base, entryId: `fork:${item.id}`, prompt: item.content, skippedTools: [] }], states: 0 };
  }
  if ((item.kind as string) === 'refusalRetry') {
    let tools: string[] = [];
    try {
      const parsed = JSON.parse(item.arguments ?? '[]') as unknown;
      if (Array.isArray(parsed)) tools = parsed.filter((x): x is string => typeof x === 'string');
    } catch {
      // A malformed list: the note keeps its text without the tool names.
    }
    return { events: [{ type: 'run.refusalRetried', ...base, discarded: item.content, tools }], states: 0 };
  }
  const events: VoxEvent[] = [{
    type: 'item.started', ...base, kind: item.kind, toolName: item.toolName, arguments: item.arguments,
    ...(item.thoughtSignature !== null ? { thoughtSignature: item.thoughtSignature } : {}),
  }];
  if (item.status === 'started') return { events, states: 0 }; // closed by the run's end, as in the source
  const app = item.kind === 'toolCall' ? mcpAppRow(store.db, item.id) : undefined;
  events.push({
    type: 'item.completed', threadId, runId, itemId, status: item.status, content: item.content, isError: item.isError,
    ...(app ? { app: { uri: app.uri, html: app.html, server: app.server, title: app.title } } : {}),
  });
  if (app && app.state !== null) events.push({ type: 'mcpApp.stateSaved', threadId, itemId, state: app.state });
  return { events, states: app && app.state !== null ? 1 : 0 };
}

/** Forks `threadId` at `messageId` (default: its head) into a new thread; a typed error for an unknown thread or message. */
export function forkThread(store: VoxStore, threadId: string, messageId?: string): ForkResult {
  // The transaction answers rather than throws (the store wraps what a transaction throws as its own failure).
  const outcome = store.transact((append): ForkResult | { refused: Error } => {
    if (!store.hasThread(threadId)) return { refused: new RunError('unknownThread', `thread ${threadId} does not exist`, { threadId }) };
    let leaf: string | null;
    try {
      leaf = messageId !== undefined ? messageOf(store, threadId, messageId).id : store.headMessageId(threadId);
    } catch (e) {
      return { refused: e as Error };
    }
    const path: MessageRow[] = leaf === null ? [] : store.activePath(threadId, leaf);
    if (path.length > MAX_FORK_MESSAGES) {
      return { refused: new BranchError('tooLarge', `the path to fork has ${path.length} messages; a fork copies at most ${MAX_FORK_MESSAGES}`, { threadId, count: path.length, max: MAX_FORK_MESSAGES }) };
    }
    const onPath = new Set(path.map((m) => m.id));
    // A run whose answer is not on the path (the fork ends before it) stays behind with its answer.
    const answeredOff = new Set(store.messages(threadId).filter((m) => m.runId !== null && !onPath.has(m.id)).map((m) => m.runId!));
    const runsOf = new Map<string, RunRow[]>();
    for (const r of store.runs(threadId)) {
      if (r.status === 'running' || r.userMessageId === null || !onPath.has(r.userMessageId) || answeredOff.has(r.id)) continue;
      runsOf.set(r.userMessageId, [...(runsOf.get(r.userMessageId) ?? []), r]);
    }
    const title = forkTitle(store.getThread(threadId).title);
    const fork = allocate('thread');
    append({ type: 'thread.created', threadId: fork, title });
    const newMessage = new Map<string, string>();
    const newRun = new Map<string, string>();
    let ordinal = 0;
    let states = 0;
    let parent: string | null = null;
    for (const m of path) {
      const id = allocate('msg');
      append({ type: 'message.added', threadId: fork, messageId: id, parentId: parent, role: m.role, content: m.content, runId: m.runId !== null ? (newRun.get(m.runId) ?? null) : null, status: m.status });
      newMessage.set(m.id, id);
      parent = id;
      for (const r of runsOf.get(m.id) ?? []) {
        const runId = deriveRunFromThreadOrdinal(fork, ordinal);
        const posture = storedPosture(r);
        append({ type: 'run.started', threadId: fork, runId, ordinal: ordinal++, provider: r.provider, model: r.model, ownerPid: 0, ownerStartedAt: null, userMessageId: id, ...(posture ? { posture } : {}) });
        newRun.set(r.id, runId);
        for (const item of store.items(r.id)) {
          const copied = itemEvents(store, fork, runId, item, derive('item', [['run', runId], ['n', String(item.ordinal)]]));
          append(...copied.events);
          states += copied.states;
        }
        append({ type: 'run.ended', threadId: fork, runId, status: endedStatus(r), error: r.error, usage: usageOf(r) });
      }
    }
    return { threadId: fork, title, messages: path.length, runs: newRun.size, appStates: states };
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome;
}
