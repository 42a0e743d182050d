/** Helpers of the importer tests: the recorded fixtures copied into a temp folder, and JSONL files read back. */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const FIXTURES = path.resolve(__dirname, '../../fixtures/importers');

/** Copies fixture `name` into `into/<name>` (the tests append to and corrupt the copies, never the fixtures). */
export function copyFixture(name: string, into: string): string {
  const dst = path.join(into, name);
  fs.cpSync(path.join(FIXTURES, name), dst, { recursive: true });
  return dst;
}

export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.jsonl')) out.push(path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  }
  return out.sort();
}

export function readJsonlFile(file: string): unknown[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown);
}
