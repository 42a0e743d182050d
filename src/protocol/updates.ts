/**
 * Engine → client updates. Every command is answered once, by `result` (its value, validated by
 * the command's result validator) or `error` ({domain, code, message}). Subscriptions then send
 * only new data: event batches from a sequence number, batches of turn chunks, change notices.
 * Clients decode through `updateEnvelope` (and each event through `eventEnvelope`), so an older
 * webview keeps working against a newer engine: unknown variants are kept, not fatal.
 */
import { forwardCompatible, type ForwardCompatibleEnvelope } from './wire/envelope';
import { arrayOf, int, literal, nullable, object, optional, str, unknownValue, type Infer } from './wire/validators';
import { wireChunk } from './chunks';
import { endedRunStatus } from './events';
import { wireError } from './errors';
import { hostCommandUpdate } from './host';
import { approvalRequest } from './commands/approvals';
import { settingsView } from './commands/settings';
import { variantPoolView } from './commands/variants';

const inReplyTo = optional(str);

export const resultUpdate = object({ type: literal('result'), inReplyTo, value: unknownValue });
export const errorUpdate = object({ type: literal('error'), inReplyTo, ...wireError.shape });
export const eventsUpdate = object({ type: literal('events'), threadId: nullable(str), events: arrayOf(unknownValue) });
export const turnChunksUpdate = object({ type: literal('turnChunks'), turnId: str, chunks: arrayOf(wireChunk) });
export const turnEndedUpdate = object({ type: literal('turnEnded'), turnId: str, status: endedRunStatus, error: optional(str) });
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

export const updateEnvelope = forwardCompatible({
  hostCommand: hostCommandUpdate,
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
}) as ForwardCompatibleEnvelope<EngineUpdate>;

export type EngineUpdate =
  | Infer<typeof hostCommandUpdate>
  | Infer<typeof resultUpdate>
  | Infer<typeof errorUpdate>
  | Infer<typeof eventsUpdate>
  | Infer<typeof turnChunksUpdate>
  | Infer<typeof turnEndedUpdate>
  | Infer<typeof approvalRequestedUpdate>
  | Infer<typeof approvalSettledUpdate>
  | Infer<typeof settingsUpdate>
  | Infer<typeof threadChangedUpdate>
  | Infer<typeof variantsUpdate>;
export type UpdateOf<K extends EngineUpdate['type']> = Extract<EngineUpdate, { type: K }>;

export { wireError, approvalRequest };
