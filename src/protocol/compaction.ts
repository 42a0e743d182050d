/**
 * Partial compaction (SPEC 3.7) as pure functions shared by the engine and the
 * webview: which compactions of a thread apply to a message path, and the path as the model sees
 * it — each compacted range replaced by its one summary — plus the fixed markdown shape a summary
 * must have. Nothing here reads a store.
 *
 * A compaction covers a contiguous range of a path, `fromMessageId` … `upToMessageId` (both
 * included): `full` the whole path, `upTo` its start to a message, `from` a message to the end
 * the path had then (messages added later follow the summary verbatim). It applies to a path
 * that holds both ends in that order (a branch that forked inside the range does not see it).
 *
 * A later compaction over an earlier one: ranges never cut each other. A new range that cuts an
 * applicable earlier one is widened to take it whole (`widenRange`); every earlier compaction
 * inside the new range is superseded — the new summary was written from the earlier summaries
 * (read in place of their raw messages), so nothing is lost twice and the model sees one summary.
 * Between applicable compactions the newest wins (`activeCompactions`).
 */

export type CompactionMode = 'full' | 'upTo' | 'from';
export const COMPACTION_MODES: readonly CompactionMode[] = ['full', 'upTo', 'from'];

/** What the path logic needs of a compaction. */
export interface CompactionSpan {
  compactionId: string;
  fromMessageId: string;
  upToMessageId: string;
  summary: string;
}

/** One entry of a compacted path: a message kept verbatim, or the summary standing for a range. */
export type PathUnit<M> = { kind: 'message'; message: M } | { kind: 'summary'; compaction: CompactionSpan; covered: number };

/** The four sections of a summary, in order, as `## ` headings (the model is asked for exactly this). */
export const SUMMARY_SECTIONS = ['Goal', 'Decisions', 'Files touched', 'Open items'] as const;
/** Longest summary accepted (characters); a longer answer is not a summary. */
export const SUMMARY_MAX_CHARS = 24_000;

/** How the model receives a summary: one user message, marked as Vox's compaction of earlier messages. */
export function summaryMessageText(summary: string, covered: number): string {
  return `<compacted_context messages="${covered}">\nThe earlier part of this conversation (${covered} messages) was compacted by Vox into this summary; the raw messages are not repeated.\n\n${summary}\n</compacted_context>`;
}

interface Placed { c: CompactionSpan; from: number; to: number }

function place<M extends { id: string }>(path: readonly M[], cs: readonly CompactionSpan[]): Placed[] {
  const index = new Map(path.map((m, i) => [m.id, i]));
  const out: Placed[] = [];
  for (const c of cs) {
    const from = index.get(c.fromMessageId);
    const to = index.get(c.upToMessageId);
    if (from !== undefined && to !== undefined && from <= to) out.push({ c, from, to });
  }
  return out;
}

/**
 * The compactions that apply to `path`, disjoint and in path order: `compactions` oldest first;
 * a newer one takes its range, an older one inside or overlapping a taken range is superseded.
 */
export function activeCompactions<M extends { id: string }>(path: readonly M[], compactions: readonly CompactionSpan[]): Array<{ compaction: CompactionSpan; fromIndex: number; toIndex: number }> {
  const taken: Placed[] = [];
  const placed = place(path, compactions);
  for (let i = placed.length - 1; i >= 0; i--) {
    const p = placed[i]!;
    if (taken.some((t) => p.from <= t.to && t.from <= p.to)) continue;
    taken.push(p);
  }
  return taken.sort((a, b) => a.from - b.from).map((p) => ({ compaction: p.c, fromIndex: p.from, toIndex: p.to }));
}

/** `path` with every active compaction's range replaced by one summary unit. */
export function compactPath<M extends { id: string }>(path: readonly M[], compactions: readonly CompactionSpan[]): PathUnit<M>[] {
  const active = activeCompactions(path, compactions);
  const units: PathUnit<M>[] = [];
  let a = 0;
  for (let i = 0; i < path.length; i++) {
    const c = active[a];
    if (c && i === c.fromIndex) {
      units.push({ kind: 'summary', compaction: c.compaction, covered: c.toIndex - c.fromIndex + 1 });
      i = c.toIndex;
      a++;
      continue;
    }
    units.push({ kind: 'message', message: path[i]! });
  }
  return units;
}

/**
 * The range [from, to] (path indexes) widened so that it cuts no active compaction: one that
 * overlaps it partly is taken whole. Returns the widened range and the compactions it supersedes.
 */
export function widenRange<M extends { id: string }>(path: readonly M[], compactions: readonly CompactionSpan[], from: number, to: number): { from: number; to: number; supersedes: string[] } {
  const active = activeCompactions(path, compactions);
  let lo = from;
  let hi = to;
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of active) {
      if (c.fromIndex <= hi && lo <= c.toIndex && (c.fromIndex < lo || c.toIndex > hi)) {
        lo = Math.min(lo, c.fromIndex);
        hi = Math.max(hi, c.toIndex);
        changed = true;
      }
    }
  }
  return { from: lo, to: hi, supersedes: active.filter((c) => c.fromIndex >= lo && c.toIndex <= hi).map((c) => c.compaction.compactionId) };
}

/** Why a text is not a summary of the fixed shape, or null when it is. */
export function summaryProblem(text: string): string | null {
  const t = text.trim();
  if (t.length === 0) return 'the answer is empty';
  if (t.length > SUMMARY_MAX_CHARS) return `the answer has ${t.length} characters (at most ${SUMMARY_MAX_CHARS})`;
  const headings = [...t.matchAll(/^##[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)].map((m) => ({ title: m[1]!.trim().toLowerCase(), at: m.index!, end: m.index! + m[0].length }));
  const want = SUMMARY_SECTIONS.map((s) => s.toLowerCase());
  const titles = headings.map((h) => h.title);
  if (titles.length !== want.length || titles.some((h, i) => h !== want[i])) {
    return `the sections must be exactly ${SUMMARY_SECTIONS.map((s) => `"## ${s}"`).join(', ')} in that order (found ${titles.length === 0 ? 'none' : titles.map((h) => `"${h}"`).join(', ')})`;
  }
  const before = t.slice(0, headings[0]!.at).trim();
  if (before.length > 0 && !/^#[ \t][^\n]*$/.test(before)) return 'there is text before the first section';
  for (let i = 0; i < headings.length; i++) {
    const body = t.slice(headings[i]!.end, i + 1 < headings.length ? headings[i + 1]!.at : t.length).trim();
    if (body.length === 0) return `the section "${SUMMARY_SECTIONS[i]}" is empty`;
  }
  return null;
}

/** The summary as kept: reasoning blocks (`<think>…</think>`) dropped, trimmed, a wrapping ```markdown fence removed. */
export function normaliseSummary(text: string): string {
  const t = text.replace(/<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi, '').trim();
  const fenced = /^```(?:markdown|md)?[ \t]*\n([\s\S]*?)\n```$/.exec(t);
  return (fenced ? fenced[1]! : t).trim();
}
