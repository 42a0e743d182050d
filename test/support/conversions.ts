/**
 * Git's content conversions and the user's index flags, drawn at random for a test repository
 * (the checkpoint property test): `core.autocrlf`, `core.eol`, a `.gitattributes` of text, eol,
 * ident, filter (`upper`, configured here), working-tree-encoding and `-text` lines, and
 * assume-unchanged / skip-worktree flags on some tracked files. Returns a one-line description
 * for failure reports. Git runs through test/support/git.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitBuf } from './git';
import type { Rng } from './random';

/** `.gitattributes` lines a run draws from (each kind of content conversion git has). */
export const ATTRIBUTE_LINES = ['* text=auto', '*.txt text eol=crlf', '*.md ident', 'a filter=upper', '*.b working-tree-encoding=UTF-16LE-BOM', 'd3/** -text', '-dash text eol=lf'];
/** `core.autocrlf` values a run draws from (null: unset). */
const AUTOCRLF = [null, 'true', 'input', 'false'];
/** `core.eol` values a run draws from (null: unset). */
const CORE_EOL = [null, 'crlf', 'lf'];
/** Share of runs with content conversions (the others have none, so the fast paths are covered too). */
const CONVERTING_RUNS = 0.7;
/** Chance of each attribute line in a converting run. */
const LINE_CHANCE = 0.5;

/** Draws and applies the conversions and flags to the repository at `root`; returns their description. */
export function drawConversions(rng: Rng, root: string, flaggable: string[]): string {
  const converting = rng.chance(CONVERTING_RUNS);
  const attrs = converting ? ATTRIBUTE_LINES.filter(() => rng.chance(LINE_CHANCE)) : [];
  const autocrlf = converting ? rng.pick(AUTOCRLF) : null;
  const eol = converting ? rng.pick(CORE_EOL) : null;
  if (attrs.length) fs.writeFileSync(path.join(root, '.gitattributes'), `${attrs.join('\n')}\n`);
  if (autocrlf) gitBuf(root, ['config', 'core.autocrlf', autocrlf]);
  if (eol) gitBuf(root, ['config', 'core.eol', eol]);
  gitBuf(root, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
  gitBuf(root, ['config', 'filter.upper.smudge', 'tr A-Z a-z']);
  const flags = flaggable.map((f) => [f, rng.pick([null, '--assume-unchanged', '--skip-worktree'])] as const).filter(([, flag]) => flag);
  for (const [f, flag] of flags) gitBuf(root, ['update-index', flag!, f]);
  return `attributes [${attrs.join('; ')}], core.autocrlf=${autocrlf ?? 'unset'}, core.eol=${eol ?? 'unset'}, flags [${flags.map(([f, flag]) => `${f} ${flag}`).join(', ')}]`;
}
