/**
 * `<mcp_app_context>` (SPEC 5.3): later turns of a thread see the states its MCP Apps saved, one
 * block per app, before the turn's user message in the request (the stored message is unchanged):
 *
 *   <mcp_app_context server="weather" uri="ui://weather/widget" item="item:…">{"city":"Oslo"}</mcp_app_context>
 *
 * `buildMcpAppContext` is pure: attribute values and the state are escaped (`&`, `<`, `>`, and `"`
 * in attributes), so a state cannot close its block or open another; newest apps are kept first
 * within MCP_APP_CONTEXT_MAX_APPS and MCP_APP_CONTEXT_MAX_BYTES, and the blocks are written oldest
 * first with a line saying how many were left out. `applyMcpAppContext` is the runner's call site.
 */
import type { ChatMessage } from '../providers/types';
import type { VoxStore } from '../store/store';
import { utf8ByteLength } from '../../protocol/mcp-apps';
import { mcpAppsOfThread } from './reads';

/** Most app states one request carries (the newest). */
export const MCP_APP_CONTEXT_MAX_APPS = 8;
/** Most UTF-8 bytes of all blocks together (escaping can grow a 16 KiB state up to 5×; an app that does not fit is left out). */
export const MCP_APP_CONTEXT_MAX_BYTES = 64 * 1024;

export interface AppContextEntry { server: string; uri: string; itemId: string; state: string }
export interface AppContext { text: string; included: number; omitted: number; bytes: number }

/** Text for the inside of a block: `&`, `<`, `>` as entities. */
export function escapeAppText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeAppText(s).replace(/"/g, '&quot;').replace(/[\r\n]/g, ' ');
}

export function appContextBlock(e: AppContextEntry): string {
  return `<mcp_app_context server="${escapeAttr(e.server)}" uri="${escapeAttr(e.uri)}" item="${escapeAttr(e.itemId)}">${escapeAppText(e.state)}</mcp_app_context>`;
}

/** The blocks of `entries` (oldest first), bounded; empty text when there is none. */
export function buildMcpAppContext(entries: readonly AppContextEntry[], maxApps = MCP_APP_CONTEXT_MAX_APPS, maxBytes = MCP_APP_CONTEXT_MAX_BYTES): AppContext {
  const kept: string[] = [];
  let bytes = 0;
  for (let i = entries.length - 1; i >= 0 && kept.length < maxApps; i--) {
    const block = appContextBlock(entries[i]!);
    const size = utf8ByteLength(block) + 1;
    if (bytes + size > maxBytes) continue; // too large with the newer ones: an older, smaller one may still fit
    kept.push(block);
    bytes += size;
  }
  kept.reverse();
  const omitted = entries.length - kept.length;
  if (kept.length === 0) return { text: '', included: 0, omitted, bytes: 0 };
  const note = omitted > 0 ? `[${omitted} more MCP App state${omitted === 1 ? '' : 's'} left out to save context.]\n` : '';
  const text = note + kept.join('\n');
  return { text, included: kept.length, omitted, bytes: utf8ByteLength(text) };
}

/** The saved states of the apps on the thread's path up to (not including) the run of `userMessageId`, oldest first. */
export function pathAppStates(store: VoxStore, threadId: string, userMessageId: string, runId: string): AppContextEntry[] {
  const apps = mcpAppsOfThread(store.db, threadId).filter((a) => a.state !== null && a.runId !== runId);
  if (apps.length === 0) return [];
  const path = new Set(store.activePath(threadId, userMessageId).map((m) => m.id));
  const onPath = new Set(store.runs(threadId).filter((r) => r.userMessageId !== null && r.userMessageId !== userMessageId && path.has(r.userMessageId)).map((r) => r.id));
  return apps.filter((a) => onPath.has(a.runId)).map((a) => ({ server: a.server, uri: a.uri, itemId: a.itemId, state: a.state! }));
}

/** The runner's call: the blocks go before the last user message of `history` (nothing when no app on the path saved state). */
export function applyMcpAppContext(store: VoxStore, t: { threadId: string; runId: string; userMessageId: string }, history: ChatMessage[]): AppContext | null {
  const built = buildMcpAppContext(pathAppStates(store, t.threadId, t.userMessageId, t.runId));
  if (built.included === 0) return null;
  const i = history.map((m) => m.role).lastIndexOf('user');
  if (i < 0) return null;
  history[i] = { ...history[i]!, content: `${built.text}\n\n${history[i]!.content}` } as ChatMessage;
  return built;
}
