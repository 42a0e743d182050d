/**
 * The open thread's compactions (SPEC 3.7), as the chat shows them: folded from
 * `thread.compacted` events (pure and JSON-serialisable like the rest of the thread state, which
 * calls `applyCompactionEvent`), and where each note goes — after the entry holding the last
 * compacted message of every compaction that applies to the open path (the path logic is
 * src/protocol/compaction.ts, shared with the engine). The messages above a note stay in the
 * list as they were: readable, and found by the in-thread find.
 */
import { activeCompactions } from '../../../src/protocol/compaction';
import type { StoredEvent as WireEvent } from '../../../src/protocol/events';
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

export type CompactionEvent = Extract<WireEvent, { type: 'thread.compacted' }>;

export function isCompactionEvent(ev: WireEvent): ev is CompactionEvent {
  return ev.type === 'thread.compacted';
}

export function applyCompactionEvent(s: CompactionFields, ev: CompactionEvent): void {
  // Assigned, then read back: in the app `s` is a $state proxy, and a push on the raw array just assigned never reaches it.
  if (!s.compactions) s.compactions = [];
  const list = s.compactions;
  if (list.some((c) => c.compactionId === ev.compactionId)) return;
  list.push({
    compactionId: ev.compactionId, mode: ev.mode, trigger: ev.trigger, fromMessageId: ev.fromMessageId, upToMessageId: ev.upToMessageId,
    coveredMessages: ev.coveredMessages, summary: ev.summary, model: ev.model,
  });
}

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
