/**
 * The open thread's compactions (SPEC 3.7), as the chat shows them: folded from
 * `thread.compacted` events (by ./features/compaction.ts; pure and JSON-serialisable like the
 * rest of the thread state), and where each note goes — after the entry holding the last
 * compacted message of every compaction that applies to the open path (the path logic is
 * src/protocol/compaction.ts, shared with the engine). The messages above a note stay in the
 * list as they were: readable, and found by the in-thread find.
 */
import { activeCompactions } from '../../../src/protocol/compaction';
import { pathIds, type Entry, type TreeFields } from './tree-state';

export interface CompactionNoteView {
  compactionId: string;
  mode: 'full' | 'upTo' | 'from';
  trigger: 'manual' | 'auto';
  fromMessageId: string;
  upToMessageId: string;
  coveredMessages: number;
  summary: string;
  model: string;
}

/** What compaction events give the thread state (optional: a state an older build saved still loads). */
export interface CompactionFields { compactions?: CompactionNoteView[] }

/** The entry key (`msg:<id>` / `run:<id>`, as thread-find.ts keys entries) each note follows, for the compactions on the open path. */
export function compactionNotes(state: CompactionFields & { tree: TreeFields; entries: Entry[]; runs: Record<string, unknown> }): Map<string, CompactionNoteView> {
  const notes = new Map<string, CompactionNoteView>();
  const all = state.compactions ?? [];
  if (all.length === 0) return notes;
  const path = pathIds(state.tree, state.tree.headId).map((id) => ({ id }));
  const byId = new Map(all.map((c) => [c.compactionId, c]));
  for (const { compaction } of activeCompactions(path, all.map((c) => ({ ...c })))) {
    const m = state.tree.messages[compaction.upToMessageId];
    if (!m) continue;
    const key = m.runId !== null && state.runs[m.runId] ? `run:${m.runId}` : `msg:${m.id}`;
    notes.set(key, byId.get(compaction.compactionId)!);
  }
  return notes;
}

/** The note's words: where the model's context starts again. */
export function noteLabel(n: CompactionNoteView): string {
  const what = n.trigger === 'auto' ? 'Context compacted automatically up to here' : 'Context compacted up to here';
  return `${what} · ${n.coveredMessages} message${n.coveredMessages === 1 ? '' : 's'} summarised by ${n.model}`;
}
