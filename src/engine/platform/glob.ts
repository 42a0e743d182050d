/**
 * The one glob dialect of Vox's path patterns (rules' `paths`, permission rules, protected paths):
 * `*` within a path segment, `**` across segments (`**∕` also matches no directory), `?` one
 * character, `{a,b}` alternatives and `[…]` / `[!…]` character classes; everything else literal.
 * Callers decide what a pattern is matched against (../rules/glob.ts, ../permissions/path-globs.ts).
 */

function escape(c: string): string {
  return /[\\^$.+()|[\]{}*?]/.test(c) ? `\\${c}` : c;
}

/** The regular-expression source of a glob (unanchored; a caller that bounds a pattern's length does so first). */
export function globSource(g: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*') {
      if (g[i + 1] === '*') {
        i++;
        if (g[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else if (c === '[') {
      const close = g.indexOf(']', i + 1);
      if (close < 0) out += '\\[';
      else {
        const body = g.slice(i + 1, close).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = close;
      }
    } else out += escape(c);
  }
  while (braces-- > 0) out += ')';
  return out;
}
