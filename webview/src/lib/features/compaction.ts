/**
 * Compaction (SPEC 3.7): the open thread's compactions (thread.compacted; ../compaction-state.ts
 * places their notes) and the intents under `compaction` — the Compact button and `/compact`
 * typed as the whole prompt compact the open thread; a message's "Compact up to here" /
 * "Compact from here" compact part of it. Each sends one `compactThread` command; the note comes
 * back as the thread's event and a refusal (the thread runs, the model's answer was not a
 * summary) as an error notice. Not while the thread runs.
 */
import type { ClientCommand } from '../../../../src/protocol/commands/index';
import type { AppModel } from '../app-model';
import { activeRun } from '../thread-model';
import { defineFeature } from './feature';

/** `/compact` as the whole prompt (`/compact from <id>` and `/compact up-to <id>` name a message). */
export const COMPACT_SLASH = /^\/compact(?:\s+(up-to|from)\s+(\S+))?\s*$/;

export interface CompactionIntentDeps {
  model: AppModel;
  send(command: ClientCommand): string;
  /** An error notice (a `/compact` that cannot run now). */
  notify?(code: string, message: string): void;
}

export class CompactionIntents {
  constructor(private readonly deps: CompactionIntentDeps) {}

  /** A thread is open, nothing runs in it, nothing is being sent or compacted. */
  get possible(): boolean {
    const { model } = this.deps;
    return !!model.thread && !activeRun(model.thread) && !model.sending && !model.compacting && (model.thread.entries.length > 0);
  }

  compact(mode: 'full' | 'upTo' | 'from', messageId?: string): boolean {
    const { model } = this.deps;
    const thread = model.thread;
    if (!thread || !this.possible || (mode !== 'full' && !messageId)) return false;
    const requestId = this.deps.send({ type: 'compactThread', threadId: thread.threadId, mode, ...(mode !== 'full' ? { messageId: messageId! } : {}) });
    model.compacting = { requestId, threadId: thread.threadId };
    return true;
  }

  /** `/compact` typed as the whole prompt runs the command instead of sending it; true when it was one. */
  slash(prompt: string): boolean {
    const m = COMPACT_SLASH.exec(prompt.trim());
    if (!m) return false;
    const ok = m[1] ? this.compact(m[1] === 'from' ? 'from' : 'upTo', m[2]) : this.compact('full');
    if (ok) this.deps.model.draft = '';
    else this.deps.notify?.('cannotCompact', this.deps.model.compacting ? 'A compaction of this thread is already on its way.' : 'Compact works on an open thread that is not running a turn.');
    return true;
  }

  /** The answer (or error) to a request came: a compaction it started is over. */
  settled(requestId: string | undefined): void {
    if (requestId !== undefined && this.deps.model.compacting?.requestId === requestId) this.deps.model.compacting = null;
  }
}

export const compactionFeature = defineFeature({
  name: 'compaction',
  events: {
    'thread.compacted'(s, ev) {
      // Assigned, then read back: in the app `s` is a $state proxy, and a push on the raw array just assigned never reaches it.
      if (!s.compactions) s.compactions = [];
      const list = s.compactions;
      if (list.some((c) => c.compactionId === ev.compactionId)) return;
      list.push({
        compactionId: ev.compactionId, mode: ev.mode, trigger: ev.trigger, fromMessageId: ev.fromMessageId, upToMessageId: ev.upToMessageId,
        coveredMessages: ev.coveredMessages, summary: ev.summary, model: ev.model,
      });
    },
  },
  install(ctx) {
    const compaction = new CompactionIntents({ model: ctx.model, send: (c) => ctx.send(c), notify: (code, message) => ctx.notify(code, message) });
    return {
      intents: { compaction },
      replied: (inReplyTo) => compaction.settled(inReplyTo),
    };
  },
});
