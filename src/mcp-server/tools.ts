/**
 * The tools Vox's MCP server offers (SPEC 5.2): threads (list, read, search, start, send to),
 * checkpoints (list, capture) and variants (list). Each is a client of one protocol command,
 * called with the caller's session (its grant decides again in the engine); each declares its
 * access (./access.ts). Results are bounded: pages of threads and messages, long messages cut.
 */
import { z } from 'zod';
import { MAX_PROMPT_CHARS, MAX_NAME_CHARS } from '../protocol/commands/common';
import { MAX_SEARCH_LIMIT, MAX_SEARCH_QUERY_CHARS } from '../protocol/commands/search';
import { MAX_THREAD_PAGE } from '../protocol/commands/threads';
import { McpToolAccess } from './access';
import { dropDomSnapshots } from './dom-snapshot';
import { INTERACTION_MODES, RUNTIME_MODES, voxModes, type InteractionMode, type RuntimeMode } from './grants';
import { defineVoxTool, type VoxToolDefinition } from './registry';

/** Threads in a list_threads page when the caller names no limit. */
export const DEFAULT_LIST_THREADS = 20;
/** Messages in a read_thread page when the caller names no limit. */
export const DEFAULT_READ_MESSAGES = 20;
/** Most messages in one read_thread page. */
export const MAX_READ_MESSAGES = 100;
/** Characters of one message read_thread returns; the rest is cut (`truncated: true`, `chars` says how long it is). */
export const MAX_MESSAGE_CHARS = 16_000;
/** Most checkpoints list_checkpoints returns (the most recent). */
export const MAX_LIST_CHECKPOINTS = 200;
/** Most changed files capture_checkpoint lists (`changedCount` still counts them all). */
export const MAX_CAPTURE_CHANGED_FILES = 200;

const id = z.string().min(1).max(MAX_NAME_CHARS);
const prompt = z.string().min(1).max(MAX_PROMPT_CHARS);
const runtimeMode = z.enum(RUNTIME_MODES);
const interactionMode = z.enum(INTERACTION_MODES);

const listThreads = defineVoxTool({
  name: 'list_threads',
  description: 'Lists Vox threads in this workspace, most recently updated first. Pass `before` (the previous page\'s nextCursor) for the next page.',
  input: { limit: z.number().int().min(1).max(MAX_THREAD_PAGE).optional(), before: z.string().min(1).max(MAX_NAME_CHARS).optional() },
  access: McpToolAccess.reads,
  handler: async (a, { client }) => client.call('listThreads', { limit: a.limit ?? DEFAULT_LIST_THREADS, ...(a.before ? { before: a.before } : {}) }),
});

const readThread = defineVoxTool({
  name: 'read_thread',
  description: `Reads a thread: its title, runs and a page of the messages on its active branch (oldest first; offset/limit, at most ${MAX_READ_MESSAGES}). Messages longer than ${MAX_MESSAGE_CHARS} characters are cut.`,
  input: { threadId: id, offset: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(MAX_READ_MESSAGES).optional() },
  access: McpToolAccess.reads,
  handler: async (a, { client }) => {
    const t = await client.call('getThread', { threadId: a.threadId });
    const offset = a.offset ?? 0;
    const limit = a.limit ?? DEFAULT_READ_MESSAGES;
    const page = t.messages.slice(offset, offset + limit).map((m) => {
      // A page snapshot goes before the cut: a cut snapshot would slip under the limit.
      const content = dropDomSnapshots(m.content).value;
      const cut = content.length > MAX_MESSAGE_CHARS;
      return { id: m.id, role: m.role, status: m.status, createdAt: m.createdAt, runId: m.runId, content: cut ? content.slice(0, MAX_MESSAGE_CHARS) : content, ...(cut ? { truncated: true, chars: content.length } : {}) };
    });
    return {
      thread: t.thread, totalMessages: t.messages.length, offset, messages: page,
      nextOffset: offset + limit < t.messages.length ? offset + limit : null,
      runs: t.runs.map((r) => ({ id: r.id, model: r.model, status: r.status, startedAt: r.startedAt, endedAt: r.endedAt, error: r.error })),
    };
  },
});

const searchThreads = defineVoxTool({
  name: 'search_threads',
  description: 'Searches every thread: titles (fuzzy) and message text and tool output (substring of 3+ characters), best first, with snippets.',
  input: { query: z.string().min(1).max(MAX_SEARCH_QUERY_CHARS), limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional() },
  access: McpToolAccess.reads,
  handler: async (a, { client }) => client.call('searchThreads', { query: a.query, ...(a.limit !== undefined ? { limit: a.limit } : {}) }),
});

const startThread = defineVoxTool({
  name: 'start_thread',
  description: 'Starts a new Vox thread with a prompt. runtimeMode: readOnly (Plan mode: only read tools run), default (the user approves each edit and command in VS Code) or fullAccess (everything runs); interactionMode: plan (answers with a plan) or default (acts). Both default to the lowest; a mode above your grant is refused (escalation).',
  input: { prompt, runtimeMode: runtimeMode.optional(), interactionMode: interactionMode.optional(), model: id.optional() },
  access: McpToolAccess.startsThreads((a) => (a.runtimeMode as RuntimeMode | undefined) ?? 'readOnly', (a) => (a.interactionMode as InteractionMode | undefined) ?? 'plan'),
  handler: async (a, { client, modes }) => {
    const runtime = modes?.runtime ?? 'readOnly';
    const interaction = modes?.interaction ?? 'plan';
    const vox = voxModes(runtime, interaction);
    const r = await client.call('sendPrompt', { threadId: null, prompt: a.prompt, newThread: vox, ...(a.model ? { model: a.model } : {}) });
    return { threadId: r.threadId, runId: r.runId, runtimeMode: runtime, interactionMode: interaction, ...vox };
  },
});

const sendToThread = defineVoxTool({
  name: 'send_to_thread',
  description: 'Sends a prompt to an existing thread (queued while it runs). Refused for a thread whose modes are above your grant.',
  input: { threadId: id, prompt },
  access: McpToolAccess.writes,
  handler: async (a, { client }) => {
    const r = await client.call('sendPrompt', { threadId: a.threadId, prompt: a.prompt });
    return { threadId: r.threadId, runId: r.runId, queued: r.queued };
  },
});

const listCheckpoints = defineVoxTool({
  name: 'list_checkpoints',
  description: `Lists checkpoints (snapshots of the workspace Vox took around edits), oldest first: of one thread, or of every thread; at most the ${MAX_LIST_CHECKPOINTS} most recent.`,
  input: { threadId: id.optional() },
  access: McpToolAccess.reads,
  handler: async (a, { client }) => {
    const r = await client.call('listCheckpoints', a.threadId ? { threadId: a.threadId } : {});
    return { checkpoints: r.checkpoints.slice(-MAX_LIST_CHECKPOINTS), total: r.checkpoints.length, threads: r.threads };
  },
});

const captureCheckpoint = defineVoxTool({
  name: 'capture_checkpoint',
  description: 'Captures the workspace now as the thread\'s next checkpoint (the user\'s branch, index and stash are not touched).',
  input: { threadId: id },
  access: McpToolAccess.writes,
  handler: async (a, { client }) => {
    const r = await client.call('captureCheckpoint', { threadId: a.threadId });
    return { ref: r.ref, threadId: r.threadId, ordinal: r.ordinal, changedCount: r.changedCount, changed: r.changed.slice(0, MAX_CAPTURE_CHANGED_FILES), warnings: r.warnings };
  },
});

const listVariants = defineVoxTool({
  name: 'list_variants',
  description: 'Lists the variant pools (one prompt run on several models in worktrees) with each variant\'s status and diff stats.',
  input: {},
  access: McpToolAccess.reads,
  handler: async (_a, { client }) => client.call('listVariants', {}),
});

/** Every tool of the server, in the order clients list them. */
export const VOX_TOOLS: readonly VoxToolDefinition[] = [
  listThreads, readThread, searchThreads, startThread, sendToThread, listCheckpoints, captureCheckpoint, listVariants,
] as unknown as readonly VoxToolDefinition[];
