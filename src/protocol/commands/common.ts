/** Field validators shared by several command areas. */
import { int, refine, str } from '../wire/validators';

/** Longest prompt accepted from a client, in UTF-16 code units (~1 MB of text). */
export const MAX_PROMPT_CHARS = 1_000_000;
/** Longest thread title, in UTF-16 code units. */
export const MAX_TITLE_CHARS = 200;
/** Longest id, path, ref or model name a command carries (they are short; this only bounds garbage). */
export const MAX_NAME_CHARS = 4_096;

export const nonEmpty = (max: number) => refine(str, (s) => s.length > 0 && s.length <= max, `non-empty string of at most ${max} characters`);
export const name = nonEmpty(MAX_NAME_CHARS);
export const seq = refine(int, (n) => n >= 0, 'non-negative integer');
export const count = refine(int, (n) => n >= 0, 'non-negative integer');
export const positive = refine(int, (n) => n > 0, 'positive integer');
