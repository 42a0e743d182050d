/**
 * What the compare tab is posted by src/extension/compare/compare-panel.ts, checked with the
 * protocol's own validators (the `compareBranches` result and the branch view) before anything
 * renders: a broken message shows an error, never half a page. Pure: tested in Node.
 */
import { COMMANDS, type CommandResult } from '../../../src/protocol/commands/index';
import { branchView, type BranchView } from '../../../src/protocol/commands/branches';
import { arrayOf, literal, object, str } from '../../../src/protocol/wire/validators';

export interface ComparePayload {
  type: 'compare';
  threadTitle: string;
  branches: BranchView[];
  data: CommandResult<'compareBranches'>;
}

const envelope = object({ type: literal('compare'), threadTitle: str, branches: arrayOf(branchView) });

/** The payload, or an Error saying what is wrong with it. */
export function decodePayload(raw: unknown): ComparePayload | Error {
  try {
    const head = envelope(raw);
    const data = COMMANDS.compareBranches.result((raw as { data?: unknown }).data);
    if (head.branches.length !== data.columns.length) return new Error(`${head.branches.length} branch labels for ${data.columns.length} columns`);
    return { ...head, data };
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

export type DiffLine = { kind: 'add' | 'del' | 'hunk' | 'head' | 'same'; text: string };

/** A unified diff as lines to colour. */
export function diffLines(diff: string): DiffLine[] {
  if (diff.length === 0) return [];
  return diff.replace(/\n$/, '').split('\n').map((text): DiffLine => {
    if (text.startsWith('+++') || text.startsWith('---')) return { kind: 'head', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'del', text };
    return { kind: 'same', text };
  });
}
