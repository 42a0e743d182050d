/**
 * Reading `git ls-files -s -z` output (SPEC §4.2), for the full walk (`capture/find-changes.ts`):
 * the flags the user set (`-v` tags), regular files, unmerged entries, attribute files. Paths are
 * exact bytes. Imports nothing from `capture/`.
 */
import { splitNul } from '../git/git';

/**
 * `ls-files -s -v -z` output without its tags (the `ls-files -s` form), and the records of
 * stage-0 entries flagged assume-unchanged (lower-case tag) or skip-worktree (`S`).
 */
export function untagStage(out: Buffer): { stage: Buffer; flagged: Buffer[] } {
  const parts: Buffer[] = [];
  const flagged: Buffer[] = [];
  for (const rec of splitNul(out)) {
    const tag = rec[0]!;
    const plain = rec.subarray(2);
    parts.push(plain, Buffer.from([0]));
    const tab = plain.indexOf(0x09);
    if ((tag === 0x53 /* S */ || (tag >= 0x61 && tag <= 0x7a)) && tab > 0 && plain[tab - 1] === 0x30) flagged.push(plain);
  }
  return { stage: Buffer.concat(parts), flagged };
}

/** Paths of the regular files (modes 100644, 100755; stage 0) in `ls-files -s -z` output. */
export function regularFilesOfStage(out: Buffer): Buffer[] {
  const result: Buffer[] = [];
  for (const rec of splitNul(out)) {
    const tab = rec.indexOf(0x09);
    const mode = rec.subarray(0, 7).toString('latin1');
    if (tab > 0 && rec[tab - 1] === 0x30 && (mode === '100644 ' || mode === '100755 ')) result.push(rec.subarray(tab + 1));
  }
  return result;
}

/** Whether any NUL-terminated record ends in a `.gitattributes` path component. */
export function mentionsAttributes(out: Buffer): boolean {
  for (let at = out.indexOf('.gitattributes\0'); at >= 0; at = out.indexOf('.gitattributes\0', at + 1)) {
    const before = at === 0 ? 0 : out[at - 1];
    // Preceded by a directory separator, a tab (`ls-files -s`), a space (`-t` tag) or the start.
    if (at === 0 || before === 0x2f || before === 0x09 || before === 0x20 || before === 0) return true;
  }
  return false;
}

/** Paths of unmerged (stage > 0) entries in `ls-files -s -z` output. */
export function unmergedFromStage(out: Buffer): Buffer[] {
  const result: Buffer[] = [];
  for (const rec of splitNul(out)) {
    const tab = rec.indexOf(0x09);
    if (tab > 0 && rec[tab - 1] !== 0x30) result.push(rec.subarray(tab + 1));
  }
  return result;
}
