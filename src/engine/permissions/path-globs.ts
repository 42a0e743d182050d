/**
 * Path globs of permission rules and protected paths: `*` within a segment, `**` across them,
 * `?` one character; a glob matches a workspace-relative path or one of its parent directories,
 * and a glob without "/" matches a name at any depth. The dialect (`{a,b}`, classes too) is
 * ../platform/glob.ts, the same as rules' paths.
 */
import { globSource } from '../platform/glob';

function globRegex(glob: string): RegExp {
  return new RegExp(`^${globSource(glob)}$`);
}

/**
 * A path glob against a workspace-relative path: the glob matches the path or one of its parent
 * directories (`.github` and `.github/**` both cover `.github/workflows/ci.yml`); a glob without
 * "/" matches a name at any depth (`*.pem`, `.env`).
 */
export function pathMatches(glob: string, rel: string): boolean {
  const g = glob.endsWith('/') ? glob.slice(0, -1) : glob;
  const segments = rel.split('/').filter((s) => s.length > 0);
  if (segments.length === 0) return g === '.' || g === '**';
  const re = globRegex(g);
  const anyDepth = !g.includes('/');
  for (let n = segments.length; n >= 1; n--) {
    const candidate = anyDepth ? segments[n - 1]! : segments.slice(0, n).join('/');
    if (re.test(candidate)) return true;
  }
  return false;
}
