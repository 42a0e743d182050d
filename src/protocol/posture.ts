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

/**
 * The model ref of a posture, as a user writes it: the engine records `model` as the resolved
 * ref (`compat:fake-large`), older or other writers may give a bare name; the provider is added
 * only when it is not already there.
 */
export function postureModelRef(p: { provider: string; model: string }): string {
  return p.model.startsWith(`${p.provider}:`) ? p.model : `${p.provider}:${p.model}`;
}
