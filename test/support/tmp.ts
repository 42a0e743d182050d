/** Temporary directories for tests, removed after each suite that asks for one. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export function makeTmpDir(prefix = 'vox-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeTmpDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
