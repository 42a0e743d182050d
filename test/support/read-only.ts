/**
 * Making a file or a folder read-only for a test, also when the tests run as root (CI does), where
 * permission bits do not stop writes: `chmod a-w` for other users, `chattr +i` (immutable) for
 * root. `makeReadOnly` checks that a write really fails before it returns, and returns the undo.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

function writeFails(p: string): boolean {
  try {
    if (fs.statSync(p).isDirectory()) {
      const probe = path.join(p, `.ro-probe-${process.pid}`);
      fs.writeFileSync(probe, 'x');
      fs.rmSync(probe);
    } else fs.appendFileSync(p, '');
    return false;
  } catch {
    return true;
  }
}

/** Makes `p` read-only; throws when this machine cannot (the test must not silently pass). */
export function makeReadOnly(p: string): () => void {
  const root = process.getuid?.() === 0;
  let undo: () => void;
  if (root) {
    execFileSync('chattr', ['+i', p]);
    undo = () => execFileSync('chattr', ['-i', p]);
  } else {
    const mode = fs.statSync(p).mode & 0o7777;
    fs.chmodSync(p, mode & ~0o222);
    undo = () => fs.chmodSync(p, mode);
  }
  if (!writeFails(p)) {
    undo();
    throw new Error(`could not make ${p} read-only on this machine (${root ? 'chattr +i' : 'chmod a-w'} did not stop a write)`);
  }
  return undo;
}
