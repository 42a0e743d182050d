/**
 * The `paths` globs of rules: `*` (within a path segment), `**` (any depth), `?`, `{a,b}` and
 * character classes, matched against workspace-relative paths with `/`. A glob without a `/`
 * matches the file name at any depth (`*.ts` matches `src/a.ts`), as in .gitignore. The dialect
 * is ../platform/glob.ts.
 */
import { globSource } from '../platform/glob';

/** Longest glob compiled (a guard against pathological patterns). */
export const MAX_GLOB_CHARS = 500;

export function globToRegExp(glob: string): RegExp {
  const g = glob.slice(0, MAX_GLOB_CHARS).replace(/^\.\//, '').replace(/^\//, '');
  const out = globSource(g);
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
