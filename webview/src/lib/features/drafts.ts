/**
 * The composer's drafts (../drafts.ts): every change of the open composer (text, chips, caret) is
 * kept under the open thread's key in `model.drafts` (saved with the webview state at the next
 * save or on hide) and posted to the extension host's copy (`draftSave`); another thread opened
 * shows its own draft; at start the host's copy is asked for (`draftsRequest`) and its `drafts`
 * answer fills in what the webview state lacks or has older (after a restart: everything).
 */
import { chipsOf, draftKey, draftOf, draftSignature, mergeDrafts } from '../drafts';
import { contextFeature } from './context';
import { defineFeature } from './feature';

export const draftsFeature = defineFeature({
  name: 'drafts',
  install(ctx) {
    const m = ctx.model;
    const book = () => (m.drafts ??= {});
    let selection = { start: 0, end: 0 };
    let caretRequests = 0;
    /** What was last kept per key, so an unchanged composer (a caret that did not move) posts nothing. */
    const kept = new Map<string, string>();
    /**
     * Changes count only once the controller started (the saved state read back): before that the
     * composer shows an empty draft that is no change of the user's — keeping it would erase the
     * host's copy.
     */
    let started = false;

    /** Shows the draft kept under `key` in the composer: text, chips, caret. */
    const show = (key: string): void => {
      const d = book()[key];
      m.draft = d?.text ?? '';
      m.context.chips = chipsOf(d);
      m.context.sendError = null;
      selection = d ? { start: d.selectionStart, end: d.selectionEnd } : { start: m.draft.length, end: m.draft.length };
      m.draftCaret = { ...selection, request: ++caretRequests };
      kept.set(key, draftSignature(d ?? null));
      ctx.use(contextFeature).context.refresh();
    };

    const drafts = {
      /** The composer changed (typed, a chip added or removed, the caret moved: `sel`): keep it. */
      changed(sel?: { start: number; end: number }): void {
        if (!started) return;
        if (sel) selection = sel;
        const key = draftKey(m.thread?.threadId);
        const d = draftOf(m.draft, m.context.chips, selection, Date.now());
        const signature = draftSignature(d);
        if (kept.get(key) === signature) return;
        kept.set(key, signature);
        if (d) book()[key] = d;
        else delete book()[key];
        ctx.draftMessage({ type: 'draftSave', threadKey: key, draft: d });
        ctx.deferSave();
      },
    };

    return {
      intents: { drafts },
      updates: {
        drafts(u) {
          const taken = mergeDrafts(book(), u.drafts);
          const key = draftKey(m.thread?.threadId);
          if (taken.includes(key)) show(key);
          if (taken.length > 0) ctx.deferSave();
        },
      },
      start() {
        started = true;
        const key = draftKey(m.thread?.threadId);
        if (book()[key]) show(key);
        else kept.set(key, draftSignature(draftOf(m.draft, m.context.chips, selection, 0)));
        ctx.draftMessage({ type: 'draftsRequest' });
      },
      threadChanged: () => show(draftKey(m.thread?.threadId)),
    };
  },
});
