/** Field validators shared by several command areas. */
import { int, refine, str } from '../wire/validators';

/** Longest prompt accepted from a client, in UTF-16 code units (~1 MB of text). */
export const MAX_PROMPT_CHARS = 1_000_000;
/** Longest thread title, in UTF-16 code units. */
export const MAX_TITLE_CHARS = 200;
/** Longest id, path or ref a command carries (they are short; this only bounds garbage). */
export const MAX_NAME_CHARS = 4_096;
/** Longest provider id with its colon in a model ref (the longest built-in, `openrouter:`, has 11). */
const MAX_PROVIDER_PREFIX_CHARS = 64;
/** Longest file path in a model ref (PATH_MAX on Linux, where the longest paths are allowed). */
const MAX_MODEL_PATH_CHARS = 4_096;
/**
 * Longest model ref (`provider:model`), in UTF-16 code units. Most are short names
 * (`openai:gpt-4o-mini`), but the model part of a `local:` ref is a GGUF file's path, so the
 * bound is a path's plus its provider prefix; a title's limit would refuse a deep path.
 */
export const MAX_MODEL_REF_CHARS = MAX_PROVIDER_PREFIX_CHARS + MAX_MODEL_PATH_CHARS;

export const nonEmpty = (max: number) => refine(str, (s) => s.length > 0 && s.length <= max, `non-empty string of at most ${max} characters`);
export const name = nonEmpty(MAX_NAME_CHARS);
/** A model ref, `provider:model` (its form is checked by the provider registry, which names the providers). */
export const modelRef = nonEmpty(MAX_MODEL_REF_CHARS);
export const seq = refine(int, (n) => n >= 0, 'non-negative integer');
export const count = refine(int, (n) => n >= 0, 'non-negative integer');
export const positive = refine(int, (n) => n > 0, 'positive integer');
