/**
 * Live turn chunks: what streams while a run is active (SPEC 2.1). A chunk is `{turnId, seq,
 * kind, data}`; `data` is text for `text`/`reasoning`/`status` and JSON of the payloads below for
 * `toolCall`/`toolResult`/`steer`/`commandOutput`/`refusalRetry`/`textRevised`. The kind is open on the wire: a newer engine may add kinds that an
 * older client skips. The engine encodes payloads with `encodeToolCall`/`encodeToolResult` and
 * clients decode them with the validators here — one definition for both sides.
 */
import { arrayOf, bool, int, object, optional, str, type Infer } from './wire/validators';
import { permissionInfo } from './events';
import { mcpAppView } from './mcp-apps';

export const CHUNK_KIND_NAMES = ['text', 'reasoning', 'toolCall', 'toolResult', 'status', 'steer', 'commandOutput', 'refusalRetry', 'textRevised'] as const;
export type ChunkKind = (typeof CHUNK_KIND_NAMES)[number];

/** A chunk on the wire; `kind` is any string (unknown kinds are skipped by clients). */
export const wireChunk = object({ turnId: str, seq: int, kind: str, data: str });
export type WireChunk = Infer<typeof wireChunk>;

/** `toolCall` chunk data: a tool call the model made, as it starts, with what the permission rules or mode decided. */
export const toolCallData = object({ itemId: str, callId: str, name: str, arguments: str, permission: optional(permissionInfo) });
export type ToolCallData = Infer<typeof toolCallData>;

/** `toolResult` chunk data: how the call ended (`status` is an item status), what it returned, the files it changed. */
export const toolResultData = object({
  itemId: str, callId: optional(str), status: str, content: str, changedPaths: optional(arrayOf(str)),
  /** The MCP App (SPEC 5.3) the call returned, rendered under the tool card. */
  app: optional(mcpAppView),
});
export type ToolResultData = Infer<typeof toolResultData>;

/** `steer` chunk data: a queued prompt the turn took at a boundary, and the tool calls it pre-empted. */
export const steerData = object({ itemId: str, prompt: str, skippedTools: arrayOf(str) });
export type SteerData = Infer<typeof steerData>;

/**
 * `refusalRetry` chunk data (SPEC 3.2): the model's last reply was a false refusal to use its
 * tools; it is discarded and the model asked again with the `tools` named. The reply's text
 * already streamed: a live view removes the last `discarded.length` characters of the run's
 * streamed text (reasoning stays) and shows the note there, as the `run.refusalRetried` item
 * does on replay.
 */
export const refusalRetryData = object({ itemId: str, discarded: str, tools: arrayOf(str) });
export type RefusalRetryData = Infer<typeof refusalRetryData>;

/**
 * `textRevised` chunk data: the last `removed` characters of the run's streamed text are
 * replaced by `text` — tool calls the model wrote as text (SPEC 3.2 salvage) leave its reply and
 * show as tool calls; the stored text item holds `text`.
 */
export const textRevisedData = object({ removed: int, text: str });
export type TextRevisedData = Infer<typeof textRevisedData>;

export function encodeRefusalRetry(d: RefusalRetryData): string {
  return JSON.stringify(refusalRetryData(d));
}

export function encodeTextRevised(d: TextRevisedData): string {
  return JSON.stringify(textRevisedData(d));
}

/**
 * `commandOutput` chunk data: the live output of a running command (run_command), terminal-
 * normalised, as an update of the tool call's view (./terminal.ts `applyUpdate`; lines in the
 * styled-text format). Updates of one call come in order; a `reset` one replaces everything.
 */
export const commandOutputData = object({
  itemId: str,
  update: object({
    commandId: str, seq: int, reset: bool, firstFrozen: int, frozenFrom: int, frozen: arrayOf(str), shift: int, liveFrom: int, live: arrayOf(str),
  }),
});
export type CommandOutputData = Infer<typeof commandOutputData>;

export function encodeCommandOutput(d: CommandOutputData): string {
  return JSON.stringify(commandOutputData(d));
}

export function encodeSteer(d: SteerData): string {
  return JSON.stringify(steerData(d));
}

export function encodeToolCall(d: ToolCallData): string {
  return JSON.stringify(toolCallData(d));
}

export function encodeToolResult(d: ToolResultData): string {
  return JSON.stringify(toolResultData(d));
}
