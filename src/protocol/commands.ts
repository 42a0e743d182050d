/**
 * Client → engine commands (webview, editor tab, guest page, CLI). Every command is validated
 * at the boundary by `commandEnvelope`; an unknown command type survives decoding as
 * `{ kind: 'unknown' }` so the engine can answer "unsupported" instead of crashing.
 */
import { forwardCompatible } from './wire/envelope';
import { int, literal, nullable, object, optional, refine, str, type Infer } from './wire/validators';

/** Longest prompt accepted from a client, in UTF-16 code units (~1 MB of text). */
export const MAX_PROMPT_CHARS = 1_000_000;
/** Longest thread title, in UTF-16 code units. */
export const MAX_TITLE_CHARS = 200;

const nonEmpty = (max: number) => refine(str, (s) => s.length > 0 && s.length <= max, `non-empty string of at most ${max} characters`);
const seq = refine(int, (n) => n >= 0, 'non-negative integer');
const requestId = optional(str);

export const subscribeThread = object({ type: literal('subscribeThread'), requestId, threadId: str, afterSeq: seq });
export const subscribeTurn = object({ type: literal('subscribeTurn'), requestId, turnId: str, afterSeq: seq });
export const unsubscribe = object({ type: literal('unsubscribe'), requestId, target: str });
export const sendPrompt = object({
  type: literal('sendPrompt'),
  requestId,
  threadId: nullable(str),
  prompt: nonEmpty(MAX_PROMPT_CHARS),
  model: optional(str),
  parentMessageId: optional(str),
});
export const cancelRun = object({ type: literal('cancelRun'), requestId, runId: str });
export const respondToApproval = object({ type: literal('respondToApproval'), requestId, callId: str, decision: literal('approved', 'denied') });
export const listThreads = object({ type: literal('listThreads'), requestId });
export const renameThread = object({ type: literal('renameThread'), requestId, threadId: str, title: nonEmpty(MAX_TITLE_CHARS) });
export const deleteThread = object({ type: literal('deleteThread'), requestId, threadId: str });

export const getSettings = object({ type: literal('getSettings'), requestId });
export const setModel = object({ type: literal('setModel'), requestId, model: nonEmpty(MAX_TITLE_CHARS) });

export const commandEnvelope = forwardCompatible({
  getSettings,
  setModel,
  subscribeThread,
  subscribeTurn,
  unsubscribe,
  sendPrompt,
  cancelRun,
  respondToApproval,
  listThreads,
  renameThread,
  deleteThread,
});

export type ClientCommand =
  | Infer<typeof getSettings>
  | Infer<typeof setModel>
  | Infer<typeof subscribeThread>
  | Infer<typeof subscribeTurn>
  | Infer<typeof unsubscribe>
  | Infer<typeof sendPrompt>
  | Infer<typeof cancelRun>
  | Infer<typeof respondToApproval>
  | Infer<typeof listThreads>
  | Infer<typeof renameThread>
  | Infer<typeof deleteThread>;
export type CommandType = ClientCommand['type'];
export type CommandOf<K extends CommandType> = Extract<ClientCommand, { type: K }>;
