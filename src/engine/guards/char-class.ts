/**
 * The repetition guard's character classes (what a character is to its tokenizer) and the facts
 * of a token its markup rule reads (symbol characters, digits, only base64's `+` `/`). Pure
 * tables and functions; the guard (repetition-guard.ts) caches tokenFacts per distinct token.
 */

/** What a character is to the tokenizer. */
export const enum Cls { Space, Word, Symbol, Cjk, CjkMark }
const LETTER_OR_DIGIT = /[\p{L}\p{N}\p{M}]/u;

/** The class of every ASCII character (the common case, one array read). */
export const ASCII_CLASS = Uint8Array.from({ length: 0x80 }, (_, c) =>
  c <= 0x20 ? Cls.Space : (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? Cls.Word : Cls.Symbol);

export function classify(c: number, ch: string): Cls {
  if (c < 0x80) return ASCII_CLASS[c] as Cls;
  if (c <= 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200b) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff) return Cls.Space;
  if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xac00 && c <= 0xd7af)) return Cls.Cjk;
  if ((c >= 0x3001 && c <= 0x303f) || (c >= 0xff00 && c <= 0xffef)) return Cls.CjkMark;
  if (c >= 0xd800 && c <= 0xdfff) return Cls.Word; // astral letters/emoji halves: part of a word run
  return LETTER_OR_DIGIT.test(ch) ? Cls.Word : Cls.Symbol;
}

/** Per-token facts of the markup rule: the token has a digit; the token is only `+` and `/` (base64 of 0xff bytes). */
export const HAS_DIGIT = 1;
export const BASE64_SYMBOLS = 2;
const NUMERIC = /\p{N}/u;

/** The symbol characters of a token (punctuation, markup, emoji halves) and its flags, once per distinct token. */
export function tokenFacts(text: string): { symbols: number; flags: number } {
  let symbols = 0;
  let digit = false;
  let base64 = text.length > 0;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c !== 0x2b && c !== 0x2f) base64 = false;
    if (c < 0x80) {
      if (c >= 0x30 && c <= 0x39) digit = true;
      else if (ASCII_CLASS[c] === Cls.Symbol) symbols++;
    } else if (c >= 0xd800 && c <= 0xdfff) symbols++;
    else {
      const cls = classify(c, text[k]!);
      if (cls === Cls.Symbol || cls === Cls.CjkMark) symbols++;
      else if (NUMERIC.test(text[k]!)) digit = true;
    }
  }
  return { symbols, flags: (digit ? HAS_DIGIT : 0) | (base64 ? BASE64_SYMBOLS : 0) };
}
