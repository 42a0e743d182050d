/**
 * The VT100 character sets a program can designate with `ESC ( F` (and `)`, `*`, `+`, `-`, `.`)
 * and shift in with SI/SO/LS2/LS3: DEC Special Graphics (`0`, the line-drawing set curses uses)
 * and the national replacement sets. Only ASCII code points below 127 are replaced, each by one
 * character, exactly as xterm.js 6 does (its table, MIT licence, (c) 2016 The xterm.js authors;
 * where xterm.js maps to two characters, Dutch `[` → "ij", it uses the first, and so do we).
 */

/** A character set: code point below 127 → the character shown instead (missing: unchanged). */
export type Charset = ReadonlyMap<number, string>;

/** Each set as pairs of characters: the ASCII one, then its replacement. */
const SETS: Record<string, string> = {
  '0': '`◆a▒b␉c␌d␍e␊f°g±h␤i␋j┘k┐l┌m└n┼o⎺p⎻q─r⎼s⎽t├u┤v┴w┬x│y≤z≥{π|≠}£~·',
  A: '#£',
  '4': '#£@¾[i\\½]|{¨|f}¼~´',
  C: '[Ä\\Ö]Å^Ü`é{ä|ö}å~ü',
  '5': '[Ä\\Ö]Å^Ü`é{ä|ö}å~ü',
  R: '#£@à[°\\ç]§{é|ù}è~¨',
  Q: '@à[â\\ç]ê^î`ô{é|ù}è~û',
  K: '@§[Ä\\Ö]Ü{ä|ö}ü~ß',
  Y: '#£@§[°\\ç]é`ù{à|ò}è~ì',
  E: '@Ä[Æ\\Ø]Å^Ü`ä{æ|ø}å~ü',
  '6': '@Ä[Æ\\Ø]Å^Ü`ä{æ|ø}å~ü',
  Z: '#£@§[¡\\Ñ]¿{°|ñ}ç',
  H: '@É[Ä\\Ö]Å^Ü`é{ä|ö}å~ü',
  '7': '@É[Ä\\Ö]Å^Ü`é{ä|ö}å~ü',
  '=': '#ù@à[é\\ç]ê^î_è`ô{ä|ö}ü~û',
};

const BUILT = new Map<string, Charset>();
for (const [flag, pairs] of Object.entries(SETS)) {
  const map = new Map<number, string>();
  for (let i = 0; i < pairs.length; i += 2) map.set(pairs.charCodeAt(i), pairs[i + 1]!);
  BUILT.set(flag, map);
}

/** Final characters of `ESC ( F` that name a set; `B` (US ASCII) means no replacement. */
export const CHARSET_FLAGS: ReadonlySet<string> = new Set([...Object.keys(SETS), 'B']);

/** The set a designation names (undefined: plain ASCII). */
export function charsetFor(flag: string): Charset | undefined {
  return BUILT.get(flag);
}

/** Which G-set (G0…G3) the intermediate of `ESC <i> F` designates. */
export const G_LEVEL: Readonly<Record<string, number>> = { '(': 0, ')': 1, '*': 2, '+': 3, '-': 1, '.': 2 };
