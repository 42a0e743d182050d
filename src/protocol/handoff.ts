/**
 * Context handoff on the wire (SPEC 5.1): the strategy names and what a built handoff reports
 * (the `handoff.built` event, the `previewHandoff` command). The builder is the engine's
 * (src/engine/handoff/); clients only read these.
 */
import { int, literal, object, optional, refine, str, type Infer } from './wire/validators';

export const HANDOFF_STRATEGIES = ['deltaSinceTargetLastSeen', 'forkDeltaSummary', 'fullThreadSummary', 'checkpointSummary', 'manualContext'] as const;
export const handoffStrategy = literal(...HANDOFF_STRATEGIES);
export type HandoffStrategy = Infer<typeof handoffStrategy>;

/** Longest manualContext text a client may send (the handoff's byte cap bounds what is carried). */
export const MAX_MANUAL_CONTEXT_CHARS = 200_000;
export const manualContextText = refine(str, (s) => s.length <= MAX_MANUAL_CONTEXT_CHARS, `at most ${MAX_MANUAL_CONTEXT_CHARS} characters`);

/** A prompt's chosen handoff (sendPrompt): the strategy, and the user's text for manualContext. */
export const handoffChoice = object({ strategy: handoffStrategy, manualContext: optional(manualContextText) });
export type HandoffChoice = Infer<typeof handoffChoice>;

/** What a handoff carried and left out (the chat's note, the CLI's preview). */
export const handoffSummaryShape = {
  strategy: handoffStrategy,
  /** The model (label) of the last run the handoff covers. */
  sourceModel: str,
  /** Ordinals of the first and last run covered (`covered_runs="from..to"`). */
  coveredFrom: int,
  coveredTo: int,
  turnsVerbatim: int,
  turnsCompacted: int,
  /** Covered runs left out to fit the caps (the oldest). */
  turnsOmitted: int,
  checkpoints: int,
  /** manualContext: characters of the user's text carried, and cut off. */
  manualChars: int,
  manualCharsOmitted: int,
  tokens: int,
  bytes: int,
};
export const handoffSummary = object(handoffSummaryShape);
export type HandoffSummary = Infer<typeof handoffSummary>;
