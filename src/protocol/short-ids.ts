/**
 * Short thread ids, as people type them: the first characters of an id's random part (its last
 * `:`-separated segment — the uuid of `thread:<uuid>`, the session id of an imported thread),
 * git-style: SHORT_ID_CHARS long, longer where two ids shown together would share it. A command
 * that takes a thread id accepts such a prefix (`resolveThreadId`): one thread matching is that
 * thread, several are a typed error naming them.
 */

/** Characters of a short id as clients print it (more when two printed ids share them). */
export const SHORT_ID_CHARS = 8;
/** The shortest prefix accepted in place of a thread id (fewer would match too much). */
export const MIN_SHORT_REF_CHARS = 4;
/** Characters of a short reference: an id segment's unreserved characters. */
const SHORT_REF = /^[A-Za-z0-9\-_.~%]+$/;

/** The part of an id a short id is cut from: its last segment. */
export function idRandomPart(id: string): string {
  return id.slice(id.lastIndexOf(':') + 1);
}

/** Whether `ref` can stand for a thread id by prefix (long enough, no separator, only id characters). */
export function isShortRef(ref: string): boolean {
  return ref.length >= MIN_SHORT_REF_CHARS && SHORT_REF.test(ref);
}

/** Whether the thread `id` is meant by the short reference `ref`. */
export function matchesShortRef(id: string, ref: string): boolean {
  return idRandomPart(id).startsWith(ref);
}

/** Short ids of `ids` shown together: SHORT_ID_CHARS of each random part, longer until no two distinct ids share one. */
export function shortIds(ids: readonly string[]): Map<string, string> {
  const distinct = [...new Set(ids)];
  const out = new Map<string, string>();
  for (const id of distinct) {
    const part = idRandomPart(id);
    let n = Math.min(SHORT_ID_CHARS, part.length);
    while (n < part.length && distinct.some((o) => o !== id && idRandomPart(o).startsWith(part.slice(0, n)))) n++;
    out.set(id, part.slice(0, n));
  }
  return out;
}
