/**
 * The `paths` globs of rules: `*` (within a path segment), `**` (any depth), `?`, `{a,b}` and
 * character classes, matched against workspace-relative paths with `/`. A glob without a `/`
 * matches the file name at any depth (`*.ts` matches `src/a.ts`), as in .gitignore.
 */

/** Longest glob compiled (a guard against pathological patterns). */
export const MAX_GLOB_CHARS = 500;

function escape(c: string): string {
  return /[\\^$.+()|[\]{}*?]/.test(c) ? `\\${c}` : c;
}

export function globToRegExp(glob: string): RegExp {
  const g = glob.slice(0, MAX_GLOB_CHARS).replace(/^\.\//, '').replace(/^\//, '');
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
  const anchored = g.includes('/') ? `^${out}$` : `^(?:.*/)?${out}$`;
  return new RegExp(anchored);
}

/** Whether a workspace-relative path matches any of the globs. */
export function matchesAny(globs: readonly string[], file: string): boolean {
  const p = file.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/$/, '');
  return globs.some((g) => {
    const re = globToRegExp(g);
    return re.test(p) || re.test(`${p}/`);
  });
}
