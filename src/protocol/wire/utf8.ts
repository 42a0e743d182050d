/** Byte lengths of strings as UTF-8, without encoding them (limits measured in bytes: app state, terminal tails). */
/** UTF-8 length of `s` (a lone surrogate counts as the 3 bytes of U+FFFD, as TextEncoder writes it). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
