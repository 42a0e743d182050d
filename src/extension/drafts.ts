/**
 * The extension host's copy of the chat composers' drafts (text, @-mention chips, caret), one per
 * thread ('' for a new thread's first prompt), in the workspace's state. A webview's own
 * `setState` survives hiding and reloads but not every restart, so each change is also posted here
 * (`draftSave`) and a starting webview asks for them (`draftsRequest` → `drafts`); the newer copy
 * wins (../../webview/src/lib/drafts.ts). Drafts are the user's own text: they stay on this machine,
 * in the workspace's storage, never in settings or the engine's database.
 */
import { MAX_SAVED_DRAFTS, draftSaveMessage, type DraftSaveMessage, type SavedDraft } from '../protocol/host';

/** The workspace state key of the drafts. */
export const DRAFTS_STATE_KEY = 'vox.drafts';

/** What the store needs of `vscode.Memento` (the workspace state). */
export interface DraftMemento {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

type Entry = { threadKey: string; draft: SavedDraft };

function decode(message: unknown): DraftSaveMessage | Error {
  try {
    return draftSaveMessage(message);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

export class DraftStore {
  constructor(private readonly memento: DraftMemento, private readonly warn: (message: string) => void) {}

  /** The drafts kept, newest first (anything that no longer fits the shape is dropped). */
  all(): Entry[] {
    const raw = this.memento.get<unknown>(DRAFTS_STATE_KEY);
    if (!Array.isArray(raw)) return [];
    const out: Entry[] = [];
    for (const e of raw) {
      const checked = decode({ type: 'draftSave', ...(e as object) });
      if (!(checked instanceof Error) && checked.draft) out.push({ threadKey: checked.threadKey, draft: checked.draft });
    }
    return out.sort((a, b) => b.draft.savedAt - a.draft.savedAt);
  }

  /**
   * Takes a webview's `draftSave` message; false (and a warning, nothing kept) when it is not one.
   * An older copy than the one kept is ignored (another chat of the same workspace saved since).
   */
  save(message: unknown): boolean {
    const decoded = decode(message);
    if (decoded instanceof Error) {
      this.warn(`ignoring a broken draft from the chat: ${decoded.message}`);
      return false;
    }
    const { threadKey, draft } = decoded;
    const kept = this.all();
    const mine = kept.find((e) => e.threadKey === threadKey);
    if (mine && draft && mine.draft.savedAt > draft.savedAt) return true;
    const rest = kept.filter((e) => e.threadKey !== threadKey);
    const next = draft ? [{ threadKey, draft }, ...rest] : rest;
    void Promise.resolve(this.memento.update(DRAFTS_STATE_KEY, next.slice(0, MAX_SAVED_DRAFTS))).catch((e: unknown) =>
      this.warn(`could not keep the chat's draft: ${e instanceof Error ? e.message : String(e)}`));
    return true;
  }
}
