/**
 * The compaction intents of the webview (SPEC 3.7): the Compact button and `/compact` typed as
 * the whole prompt compact the open thread; a message's "Compact up to here" / "Compact from
 * here" compact part of it. Each sends one `compactThread` command; the note comes back as the
 * thread's `thread.compacted` event (./compaction-state.ts) and a refusal (the thread runs, the
 * model's answer was not a summary) as an error notice. Not while the thread runs.
 */
import type { ClientCommand } from '../../../src/protocol/commands/index';
import type { AppModel } from './app-model';
import { activeRun } from './thread-state';

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
