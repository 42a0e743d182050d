/**
 * Preparing a model before the first prompt. A chat view sends `prepareModel` when it opens (and
 * when the model changes) so the first answer does not wait for a local model to load: loading
 * llama.cpp, the GGUF and its context takes about 1.7 s on a small machine, a prompt after that
 * about 50 ms. Providers with nothing to load (remote APIs) answer at once.
 */
import { bool, int, nullable, object, optional, str, type Infer } from '../wire/validators';
import { modelRef } from './common';
import { defineCommand } from './define';

export const preparedModel = object({
  /** The ref that was prepared (the default model when none was named). */
  model: str,
  /** True when the model is ready (loaded, or nothing to load); false with `reason` when it failed. */
  prepared: bool,
  /** True when this call did the work (false: it was ready already, or there was nothing to do). */
  loaded: bool,
  /** How long this call took, in milliseconds. */
  ms: int,
  /** Why it could not be prepared (the first prompt will show the same failure as an error). */
  reason: nullable(str),
});
export type PreparedModel = Infer<typeof preparedModel>;

export const prepareCommands = {
  prepareModel: defineCommand('prepareModel', {
    readOnly: true,
    summary: 'Loads a model ahead of the first prompt (a local model, its context); answers when it is ready.',
    requires: ['write'],
    params: { model: optional(modelRef) },
    result: preparedModel,
  }),
};
