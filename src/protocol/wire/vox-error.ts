/**
 * The one base of every typed Vox failure, and the one table of what can fail: each error
 * domain with the codes it may carry. Engine errors (StoreError, CheckpointError, …) and the
 * wire's own (EnvelopeError, ValidationError) extend `VoxError<domain>`, so their `code` is
 * checked against this table at compile time, and a client receives exactly `{domain, code,
 * message}` (../errors.ts) for any of them. A failure that is not a VoxError is an internal
 * error on the wire: its text never reaches a user raw (see the engine's session/wire-errors.ts).
 *
 * Adding a code: append it to its domain's list here; clients that do not know it still read
 * `domain` and `message`. Adding a domain: a new key.
 */

/** Every error domain and its codes (append-only: clients switch on them). */
export const ERROR_CODES = {
  /** The protocol itself: a command that does not decode, is unknown, or is above the caller's grant. */
  protocol: ['invalidCommand', 'unsupportedCommand', 'capabilityDenied', 'invalidJson', 'notAnObject', 'missingType', 'invalidPayload', 'invalidValue', 'closed'],
  /** Wire compression (SPEC 1.3). */
  interning: ['tooDeep', 'badIndex', 'badNumber'],
  /** Entity ids (SPEC 1.1). */
  id: ['invalidPrefix', 'invalidKey', 'duplicateKey', 'emptyValue', 'invalidOrdinal', 'malformedId', 'invalidEncoding'],
  /** The SQLite event store. */
  store: ['notSqlite', 'corrupt', 'newerVersion', 'locked', 'notFound', 'conflict', 'invalidEvent', 'io', 'nativeModule', 'notAFile', 'readOnly', 'ambiguousId'],
  /** Live turn streams. */
  stream: ['unknownTurn', 'seqAhead', 'ended', 'badSeq', 'evicted', 'storeGap', 'badInput', 'reentrant'],
  /** Runs: who runs what, one active run per thread. */
  run: ['threadBusy', 'unknownRun', 'unknownThread', 'shuttingDown', 'queueFull', 'unknownEntry', 'queueEntryGone', 'notWaiting'],
  /** Model providers. */
  provider: ['rateLimited', 'quotaExhausted', 'auth', 'badRequest', 'server', 'network', 'malformedStream', 'cancelled', 'modelLoad', 'notSupported'],
  /** Connecting a model: listing a provider's models and the connection test (engine/connect/). */
  connect: ['badUrl', 'unknownProvider', 'noKey', 'dnsFailed', 'refused', 'unauthorized', 'modelNotFound', 'timeout', 'httpStatus', 'badResponse', 'network', 'notSupported', 'badName', 'nameClash', 'unknownEndpoint'],
  /** Model downloads. */
  download: ['network', 'httpStatus', 'checksum', 'cancelled', 'notGguf'],
  /** The agent's tools. */
  tool: ['invalidArguments', 'unknownTool', 'duplicateTool', 'pathEscape', 'notFound', 'timeout', 'tooLarge', 'io', 'denied', 'cancelled', 'editMismatch', 'notAvailable'],
  /** Tool approvals: the gate and the policy settings. */
  approval: ['unknownCall', 'duplicateCall', 'invalidDecision', 'notAnObject', 'unknownToolClass', 'invalidMode', 'noApprover'],
  /** Permission modes and rules (settings vox.permissions, the workspace's .vox/permissions.json). */
  permission: ['invalidRules', 'unreadableRules', 'invalidMode', 'unsafeRule', 'unknownRule'],
  /** Plan mode: plans of threads and their steps. */
  plan: ['unknownPlan', 'unknownStep', 'invalidPlan', 'notInPlanMode'],
  /** Rules (SPEC 6.1): user rules (settings vox.rules), .vox/rules/*.md, peer files (CLAUDE.md, AGENTS.md, .clinerules). */
  rule: ['invalidName', 'reservedName', 'duplicateName', 'invalidRule', 'unknownRule', 'outsideWorkspace', 'notSupported', 'tooLarge', 'io'],
  /** git itself. */
  git: ['notARepository', 'failed', 'timeout', 'notFound', 'cancelled'],
  /** Checkpoints (SPEC 4.2). */
  checkpoint: ['notARepository', 'unknownCheckpoint', 'badThreadId', 'badArgument', 'checkpointExists', 'pathNotFound', 'conflict', 'gitFailed'],
  /** Managed worktrees (SPEC 4.1). */
  worktree: ['outsideManagedRoot', 'invalidSlug', 'locked', 'notLinked', 'alreadyExists', 'notARepository', 'noCommits', 'invalidRef', 'dirty', 'unsafeTree', 'gitFailed', 'envCopyRefused'],
  /** Variants (SPEC 4.3). */
  variant: [
    'invalidModels', 'tooManyVariants', 'invalidPrompt', 'notARepository', 'noCommits', 'alreadyExists', 'conflict', 'notFinished',
    'alreadyAdopted', 'discarded', 'unknownVariant', 'unknownPool', 'noWorktree', 'unknownThread', 'gitFailed', 'removeFailed', 'failed',
  ],
  /** Reviewing the agent's edits: previews of waiting calls, a turn's changes, per-hunk keep/undo. */
  review: ['notAnEdit', 'unknownCall', 'noTurn', 'unknownFile', 'unknownHunk', 'binaryFile', 'tooLarge', 'notAFile', 'cannotPreview'],
  /** The conversation tree: branches, switching, regenerate / retry / edit, compare (../branches.ts). */
  branch: ['unknownMessage', 'wrongThread', 'badLeaves', 'tooLarge', 'emptyContent', 'notRetryable', 'nothingToRegenerate', 'cycle', 'badTarget'],
  /** Partial compaction (SPEC 3.7): the range asked for, the model's summary. */
  compaction: ['invalidSummary', 'nothingToCompact', 'unknownMessage', 'badTarget', 'conflict'],
  /** A code block's Insert at Cursor / Apply to File, done by the VS Code extension (src/extension/code-actions/). */
  codeAction: ['noEditor', 'noWorkspace', 'outsideWorkspace', 'invalidPath', 'notAFile', 'writeFailed', 'invalidMessage', 'protectedPath'],
  /** Bundles: one JSON file of threads, rules and checkpoint ref names (../../engine/bundles/). */
  bundle: ['notABundle', 'newerVersion', 'malformed', 'tooLarge', 'io', 'unknownThread', 'conflict', 'rightsChange', 'foreignHistory'],
  /** Stream guards of the agent loop (engine/guards/): the model looped and its stream was stopped. */
  guard: ['singleTokenRun', 'ngramCycle'],
  /** A prompt's @-mentions (engine/context/): one that cannot be attached when the client asked that all be (`strictMentions`). */
  context: ['mentionNotAttached'],
  /** Context handoff across models (SPEC 5.1, engine/handoff/). */
  handoff: ['manualContextMissing', 'unknownThread'],
  /** Settings the host supplied. */
  settings: ['invalidSetting'],
  /** The machine: cross-process locks; a full disk (SQLite, a file write or git out of space: "the disk is full"). */
  platform: ['locked', 'diskFull'],
  /** Importing Claude Code, Codex and Cursor sessions (src/engine/importers/). */
  import: ['missingDir', 'notADirectory', 'unreadable', 'notACursorStore', 'unknownSession'],
  /** Vox as an MCP client (engine/mcp/): config files, connections, calls, OAuth sign-in. */
  mcp: ['invalidConfig', 'unknownServer', 'unknownTool', 'unknownPrompt', 'unknownResource', 'notConnected', 'disabled', 'timeout', 'crashed', 'tooLarge', 'authRequired', 'authFailed', 'protocolError', 'callFailed', 'invalidArguments'],
  /** Vox as an MCP server (src/mcp-server/): tool access, grants, OAuth 2.1 + DPoP on HTTP. */
  mcpServer: ['rawRegistration', 'capabilityDenied', 'escalation', 'invalidClient', 'invalidGrant', 'invalidToken', 'invalidDpop', 'dpopReplay', 'dpopRateLimited', 'dpopStoreFull', 'invalidRequest', 'notEnabled', 'bindFailed', 'unknownTool', 'invalidArguments', 'internal'],
  /** MCP Apps (SPEC 5.3): widget state per turn item. */
  mcpApp: ['stateTooLarge', 'unknownItem', 'notAnApp', 'invalidState'],
  /** The cost ledger (SPEC 3.4): cost expressions, amounts and price cards that do not read; a call refused before it spends (balance short, a cap reached, no price to check it by). */
  ledger: ['invalidExpression', 'invalidAmount', 'invalidPriceCard', 'insufficientBattery', 'capReached', 'unpricedModel', 'unknownThread'],
  /** Anything not covered above: a bug or an unexpected library failure (message kept generic). */
  internal: ['internal'],
} as const satisfies Record<string, readonly string[]>;

export type ErrorDomain = keyof typeof ERROR_CODES;
export type ErrorCode<D extends ErrorDomain = ErrorDomain> = (typeof ERROR_CODES)[D][number];

export const ERROR_DOMAINS = Object.keys(ERROR_CODES) as ErrorDomain[];

export function isErrorDomain(s: string): s is ErrorDomain {
  return Object.prototype.hasOwnProperty.call(ERROR_CODES, s);
}

/** Base of every typed Vox error: a domain, a code from that domain's list, a message for people. */
export abstract class VoxError<D extends ErrorDomain = ErrorDomain> extends Error {
  abstract readonly domain: D;
  constructor(
    readonly code: ErrorCode<D>,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isVoxError(e: unknown): e is VoxError {
  return e instanceof VoxError;
}
