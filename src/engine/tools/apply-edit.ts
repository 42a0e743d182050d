/**
 * `apply_edit`: replaces an exact snippet of an existing file. The match is exact (after treating
 * CRLF as LF); a miss returns `editMismatch` with a hint (whitespace-only difference, or the closest
 * line), and an ambiguous match asks for more context. The file keeps its line endings (CRLF files
 * stay CRLF, mixed files are edited in place) and its UTF-8 BOM. It is read through one race-free
 * descriptor and written with the atomic, confined `writeInWorkspace` (./confined-fs.ts); FIFOs,
 * sockets and devices are refused without being opened.
 */
import type { ToolDefinition } from './schema';
import { openInWorkspace, specialFileMessage, writeInWorkspace } from './confined-fs';
import { BINARY_SNIFF_BYTES, binaryReason, cutText } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

/** Largest file apply_edit will load and rewrite. */
export const APPLY_EDIT_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Characters of file text quoted back in a mismatch hint. */
export const EDIT_HINT_MAX_CHARS = 2000;
/** File lines compared when looking for the closest line (keeps hints cheap on huge files). */
const HINT_MAX_LINES_SCANNED = 50_000;
/** Characters of each line compared for similarity. */
const HINT_LINE_COMPARE_CHARS = 400;
/** Similarity (Dice coefficient over character bigrams, 0..1) a line needs to be called "closest". */
const HINT_MIN_SIMILARITY = 0.5;
/** Match line numbers listed when oldText is ambiguous. */
const AMBIGUOUS_LINES_LISTED = 10;

export interface ApplyEditArgs {
  path: string;
  oldText: string;
  newText: string;
  replaceAll?: boolean;
}

const toLf = (s: string): string => s.replace(/\r\n/g, '\n');

/** Start offsets of non-overlapping occurrences of `needle` in `hay`. */
function occurrences(hay: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, aLen: number, b: string): number {
  const bg = bigrams(b);
  const total = aLen + Math.max(0, b.length - 1);
  if (total === 0) return 0;
  let common = 0;
  for (const [g, n] of bg) common += Math.min(n, a.get(g) ?? 0);
  return (2 * common) / total;
}

/** Explains why `oldText` (LF) was not found in `text` (LF), quoting what the file really has. */
function mismatchHint(text: string, oldText: string): string {
  const canon = (l: string): string => l.trim().replace(/\s+/g, ' ');
  const fileLines = text.split('\n');
  const oldLines = oldText.split('\n');
  while (oldLines.length > 1 && oldLines[0]!.trim() === '') oldLines.shift();
  while (oldLines.length > 1 && oldLines[oldLines.length - 1]!.trim() === '') oldLines.pop();
  const want = oldLines.map(canon);
  const fileCanon = fileLines.map(canon);
  for (let i = 0; i + want.length <= fileCanon.length; i++) {
    if (want.every((w, j) => fileCanon[i + j] === w)) {
      const actual = fileLines.slice(i, i + want.length).join('\n');
      return (
        `oldText matches lines ${i + 1}-${i + want.length} only when whitespace is ignored ` +
        `(indentation, tabs or trailing spaces differ). The file has exactly:\n${cutText(actual, EDIT_HINT_MAX_CHARS)}`
      );
    }
  }
  const probe = oldLines.find((l) => l.trim() !== '')?.trim().slice(0, HINT_LINE_COMPARE_CHARS) ?? '';
  const probeGrams = bigrams(probe);
  let best = { line: 0, score: 0 };
  const limit = Math.min(fileLines.length, HINT_MAX_LINES_SCANNED);
  for (let i = 0; i < limit; i++) {
    const candidate = fileLines[i]!.trim().slice(0, HINT_LINE_COMPARE_CHARS);
    if (candidate === '') continue;
    const score = dice(probeGrams, Math.max(0, probe.length - 1), candidate);
    if (score > best.score) best = { line: i + 1, score };
  }
  if (best.score >= HINT_MIN_SIMILARITY) {
    return (
      `The closest line to the first line of oldText is line ${best.line}:\n` +
      `${cutText(fileLines[best.line - 1]!, EDIT_HINT_MAX_CHARS)}\nRe-read the file and copy the text exactly.`
    );
  }
  return 'Nothing in the file resembles the first line of oldText; the file may have changed. Re-read it with read_file.';
}

type Eol = 'lf' | 'crlf' | 'mixed';

function detectEol(text: string): Eol {
  const crlf = occurrences(text, '\r\n').length;
  const lf = occurrences(text, '\n').length - crlf;
  if (crlf === 0) return 'lf';
  return lf === 0 ? 'crlf' : 'mixed';
}

/** The file's bytes, read through one confined descriptor; a result when it cannot be edited as text. */
async function readForEdit(ctx: Pick<ToolContext, 'workspaceRoot'>, userPath: string): Promise<{ rel: string; raw: Buffer } | ToolResult> {
  const { resolved, entry } = await openInWorkspace(ctx.workspaceRoot, userPath);
  const rel = resolved.relative;
  if (entry.kind === 'missing') throw new ToolError('notFound', `File not found: ${rel}. Use write_file to create a new file.`);
  if (entry.kind === 'directory') {
    await entry.dir.close();
    return { content: `${rel} is not a regular file.`, isError: true };
  }
  if (entry.kind === 'special') return { content: specialFileMessage(rel, entry.stat), isError: true };
  try {
    if (entry.stat.size > APPLY_EDIT_MAX_FILE_BYTES) {
      throw new ToolError('tooLarge', `${rel} is ${entry.stat.size} bytes; apply_edit handles at most ${APPLY_EDIT_MAX_FILE_BYTES}.`);
    }
    return { rel, raw: await entry.handle.readFile() };
  } finally {
    await entry.handle.close();
  }
}

/** What an edit will write: the file's bytes now and its new text (a result instead when it cannot be edited). */
export interface PlannedEdit {
  rel: string;
  before: Buffer;
  after: string;
  /** 1-based line of the first replacement, and how many there are. */
  firstLine: number;
  count: number;
}

/**
 * Computes apply_edit's result without writing: the tool itself writes exactly `after`, so a
 * preview built from this is what the file becomes (../review/preview.ts).
 */
export async function planApplyEdit(args: ApplyEditArgs, ctx: Pick<ToolContext, 'workspaceRoot'>): Promise<PlannedEdit | ToolResult> {
  // Refuse .git and other places no write may go before reading anything.
  await resolveInWorkspace(ctx.workspaceRoot, args.path, { forWrite: true });
  const read = await readForEdit(ctx, args.path);
  if ('content' in read) return read;
  const { rel, raw } = read;
  const binary = binaryReason(raw.subarray(0, BINARY_SNIFF_BYTES));
  if (binary !== undefined) return { content: `${rel} looks like a binary file (${binary}); it cannot be edited as text.`, isError: true };

  let text = raw.toString('utf8');
  const bom = text.startsWith('\uFEFF');
  if (bom) text = text.slice(1);
  const eol = detectEol(text);
  const oldLf = toLf(args.oldText);
  const newLf = toLf(args.newText);

  // `work` is the text searched; `oldT`/`newT` the snippets in its line-ending convention.
  let work = eol === 'crlf' ? toLf(text) : text;
  let oldT = oldLf;
  let newT = newLf;
  let hits = occurrences(work, oldT);
  if (hits.length === 0 && eol === 'mixed' && oldLf.includes('\n')) {
    // Mixed files are edited in place: try the snippet spelled with CRLF as well.
    oldT = oldLf.replace(/\n/g, '\r\n');
    newT = newLf.replace(/\n/g, '\r\n');
    hits = occurrences(work, oldT);
  }

  if (hits.length === 0) {
    throw new ToolError('editMismatch', `oldText was not found in ${rel}. ${mismatchHint(toLf(text), oldLf)}`);
  }
  if (hits.length > 1 && !args.replaceAll) {
    const lines = hits.slice(0, AMBIGUOUS_LINES_LISTED).map((h) => lineAt(work, h));
    const more = hits.length > AMBIGUOUS_LINES_LISTED ? ', …' : '';
    throw new ToolError(
      'editMismatch',
      `oldText matches ${hits.length} places in ${rel} (lines ${lines.join(', ')}${more}). ` +
        'Include more surrounding lines so it matches exactly once, or set replaceAll=true to replace every occurrence.',
    );
  }

  const firstLine = lineAt(work, hits[0]!);
  work = work.split(oldT).join(newT);
  let out = eol === 'crlf' ? work.replace(/\n/g, '\r\n') : work;
  if (bom) out = `\uFEFF${out}`;
  return { rel, before: raw, after: out, firstLine, count: hits.length };
}

async function applyEdit(args: ApplyEditArgs, ctx: ToolContext): Promise<ToolResult> {
  const plan = await planApplyEdit(args, ctx);
  if ('content' in plan) return plan;
  const { firstLine, count } = plan;
  const { resolved } = await writeInWorkspace(ctx.workspaceRoot, args.path, plan.after);
  const what = count === 1 ? `1 occurrence at line ${firstLine}` : `${count} occurrences`;
  return { content: `Edited ${resolved.realRelative}: replaced ${what}.`, changedPaths: [resolved.realRelative] };
}

export const applyEditTool: ToolDefinition<ApplyEditArgs> = {
  spec: {
    name: 'apply_edit',
    description:
      'Replace an exact snippet of an existing file. oldText must match the file exactly (including indentation) ' +
      'and, unless replaceAll is true, exactly once; include a few surrounding lines to make it unique. Line ' +
      'endings and a BOM are preserved.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.', minLength: 1 },
        oldText: { type: 'string', description: 'Exact text to replace.', minLength: 1 },
        newText: { type: 'string', description: 'Replacement text (may be empty to delete).' },
        replaceAll: { type: 'boolean', description: 'Replace every occurrence instead of requiring one.' },
      },
      required: ['path', 'oldText', 'newText'],
      additionalProperties: false,
    },
  },
  toolClass: 'write',
  mutating: true,
  validate(args) {
    if (toLf(args.oldText) === toLf(args.newText)) {
      throw new ToolError('invalidArguments', 'oldText and newText are identical; there is nothing to change.');
    }
  },
  run: applyEdit,
};
