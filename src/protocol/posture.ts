/**
 * A run's posture (SPEC 6.3): what an assistant answer was generated with — the
 * model and provider, the sampling settings sent to it, and the rules and mentions attached to
 * the prompt. Recorded on `run.started` (optional there: events of older builds have none) and
 * reused by regenerate / retry / edit, so a rerun asks the same question the same way.
 */
import { arrayOf, bool, literal, nullable, num, object, str, type Infer } from './wire/validators';

export const reasoningEffort = literal('low', 'medium', 'high');
export type ReasoningEffort = Infer<typeof reasoningEffort>;

/** Sampling settings a run may carry (each unset: the provider's default). */
export interface SamplingSettings {
  temperature?: number | null;
  topP?: number | null;
  reasoningEffort?: ReasoningEffort | null;
}

export const posture = object({
  provider: str,
  model: str,
  /** null: the provider's default (or a model without reasoning effort). */
  reasoningEffort: nullable(reasoningEffort),
  /** Always false today: no provider of Vox searches the web yet. */
  webSearch: bool,
  /** null: the provider's default. */
  temperature: nullable(num),
  /** null: the provider's default. */
  topP: nullable(num),
  /** Names of the rules attached to the prompt. */
  rules: arrayOf(str),
  /** Labels of the @-mentions the prompt carried. */
  mentions: arrayOf(str),
});
export type Posture = Infer<typeof posture>;
