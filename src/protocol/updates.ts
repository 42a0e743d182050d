/**
 * Engine → client updates. Every command is answered once, by `result` (its value, validated by
 * the command's result validator) or `error` ({domain, code, message}). Subscriptions then send
 * only new data: event batches from a sequence number, batches of turn chunks, change notices.
 * Clients decode through `updateEnvelope` (and each event through `eventEnvelope`), so an older
 * webview keeps working against a newer engine: unknown variants are kept, not fatal.
 */
import { forwardCompatible, type ForwardCompatibleEnvelope } from './wire/envelope';
import { arrayOf, bool, int, literal, nullable, object, optional, str, unknownValue, type Infer } from './wire/validators';
import { wireChunk } from './chunks';
import { endedRunStatus, runFailure } from './events';
import { wireError } from './errors';
import { draftsUpdate, hostCommandUpdate } from './host';
import { approvalRequest } from './commands/approvals';
import { settingsView } from './commands/settings';
import { variantPoolView } from './commands/variants';
import { mcpServerListView } from './commands/mcp';

const inReplyTo = optional(str);

export const resultUpdate = object({ type: literal('result'), inReplyTo, value: unknownValue });
export const errorUpdate = object({ type: literal('error'), inReplyTo, ...wireError.shape });
/**
 * A batch of stored events. A subscription's replay of a long thread comes as several batches of
 * at most REPLAY_CHUNK_EVENTS (`replayChunks`), all but the last marked `more`: each is its own
 * message, decoded in its own task on the client, so no frame waits for one huge message; a client
 * holds back the thread until the batch without `more` (older engines never send it).
 */
export const eventsUpdate = object({ type: literal('events'), threadId: nullable(str), events: arrayOf(unknownValue), more: optional(bool) });

/** Most events in one batch of a replay (a 2,000-message thread is ~10,000 events: ~20 batches). */
export const REPLAY_CHUNK_EVENTS = 500;

/** A replay's events as the batches a subscription sends, in order (one batch, possibly empty, for a short one). */
export function replayChunks<T>(events: readonly T[]): { events: T[]; more: boolean }[] {
  if (events.length <= REPLAY_CHUNK_EVENTS) return [{ events: [...events], more: false }];
  const out: { events: T[]; more: boolean }[] = [];
  for (let i = 0; i < events.length; i += REPLAY_CHUNK_EVENTS) {
    out.push({ events: events.slice(i, i + REPLAY_CHUNK_EVENTS), more: i + REPLAY_CHUNK_EVENTS < events.length });
  }
  return out;
}
export const turnChunksUpdate = object({ type: literal('turnChunks'), turnId: str, chunks: arrayOf(wireChunk) });
export const turnEndedUpdate = object({ type: literal('turnEnded'), turnId: str, status: endedRunStatus, error: optional(str), failure: optional(runFailure) });
export const approvalRequestedUpdate = object({ type: literal('approvalRequested'), ...approvalRequest.shape });
export const approvalSettledUpdate = object({
  type: literal('approvalSettled'), callId: str, threadId: str, runId: str, decision: literal('approved', 'denied', 'cancelled'),
});
/** Unsolicited settings (a new session, the model changed); `getSettings` answers the same shape as a result. */
export const settingsUpdate = object({ type: literal('settings'), ...settingsView.shape });
/** From `watchThreads`: something happened to a thread (the event type says what). */
export const threadChangedUpdate = object({ type: literal('threadChanged'), threadId: str, eventType: str, seq: int });
/** From `watchVariants`: every pool, after any change. */
export const variantsUpdate = object({ type: literal('variants'), pools: arrayOf(variantPoolView) });

/** From `watchMcpServers`: every MCP server, after any change. */
export const mcpServersUpdate = object({ type: literal('mcpServers'), ...mcpServerListView.shape });

export const updateEnvelope = forwardCompatible({
  hostCommand: hostCommandUpdate,
  drafts: draftsUpdate,
  result: resultUpdate,
  error: errorUpdate,
  events: eventsUpdate,
  turnChunks: turnChunksUpdate,
  turnEnded: turnEndedUpdate,
  approvalRequested: approvalRequestedUpdate,
  approvalSettled: approvalSettledUpdate,
  settings: settingsUpdate,
  threadChanged: threadChangedUpdate,
  variants: variantsUpdate,
  mcpServers: mcpServersUpdate,
}) as ForwardCompatibleEnvelope<EngineUpdate>;

export type EngineUpdate =
  | Infer<typeof hostCommandUpdate>
  | Infer<typeof draftsUpdate>
  | Infer<typeof resultUpdate>
  | Infer<typeof errorUpdate>
  | Infer<typeof eventsUpdate>
  | Infer<typeof turnChunksUpdate>
  | Infer<typeof turnEndedUpdate>
  | Infer<typeof approvalRequestedUpdate>
  | Infer<typeof approvalSettledUpdate>
  | Infer<typeof settingsUpdate>
  | Infer<typeof threadChangedUpdate>
  | Infer<typeof variantsUpdate>
  | Infer<typeof mcpServersUpdate>;
export type UpdateOf<K extends EngineUpdate['type']> = Extract<EngineUpdate, { type: K }>;

export { wireError, approvalRequest };
