/**
 * The extension host's copy of the composer drafts (src/extension/drafts.ts) over a workspace-state
 * memento: kept per thread, newest first, an empty draft forgets it, an older copy does not
 * overwrite a newer one, the count is bounded, and a broken message is refused with a warning.
 */
import { strict as assert } from 'node:assert';
import { DRAFTS_STATE_KEY, DraftStore, type DraftMemento } from '../../src/extension/drafts';
import { MAX_SAVED_DRAFTS, type SavedDraft } from '../../src/protocol/host';

/** The memento's contract (get / update), as VS Code's workspace state keeps it: values are JSON. */
class JsonMemento implements DraftMemento {
  private readonly values = new Map<string, string>();
  get<T>(key: string): T | undefined {
    const v = this.values.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

const draft = (text: string, savedAt: number): SavedDraft => ({ text, chips: [{ kind: 'file', target: 'src/a.ts', label: 'src/a.ts' }], selectionStart: 1, selectionEnd: 2, savedAt });

describe('DraftStore: the host copy of the composer drafts', () => {
  it('keeps one draft per thread, newest first; null forgets it; an older copy loses', () => {
    const memento = new JsonMemento();
    const warnings: string[] = [];
    const store = new DraftStore(memento, (w) => warnings.push(w));
    assert.equal(store.save({ type: 'draftSave', threadKey: '', draft: draft('new thread', 1) }), true);
    store.save({ type: 'draftSave', threadKey: 'thread:a', draft: draft('in a', 2) });
    store.save({ type: 'draftSave', threadKey: 'thread:a', draft: draft('in a, older', 1) });
    assert.deepEqual(store.all().map((e) => [e.threadKey, e.draft.text]), [['thread:a', 'in a'], ['', 'new thread']]);
    assert.deepEqual(store.all()[0]!.draft.chips, [{ kind: 'file', target: 'src/a.ts', label: 'src/a.ts' }]);
    // A second store over the same memento (a restart) reads the same.
    assert.deepEqual(new DraftStore(memento, () => {}).all().map((e) => e.draft.text), ['in a', 'new thread']);
    store.save({ type: 'draftSave', threadKey: 'thread:a', draft: null });
    assert.deepEqual(store.all().map((e) => e.threadKey), ['']);
    assert.deepEqual(warnings, []);
  });

  it('keeps at most MAX_SAVED_DRAFTS (the newest); refuses a broken message and drops a broken stored entry', () => {
    const memento = new JsonMemento();
    const warnings: string[] = [];
    const store = new DraftStore(memento, (w) => warnings.push(w));
    for (let i = 0; i < MAX_SAVED_DRAFTS + 5; i++) store.save({ type: 'draftSave', threadKey: `thread:${i}`, draft: draft(`d${i}`, 10 + i) });
    const all = store.all();
    assert.equal(all.length, MAX_SAVED_DRAFTS);
    assert.equal(all[0]!.draft.text, `d${MAX_SAVED_DRAFTS + 4}`);
    assert.equal(store.save({ type: 'draftSave', threadKey: 'thread:x', draft: { text: 5 } }), false);
    assert.match(warnings[0] ?? '', /broken draft/);
    void memento.update(DRAFTS_STATE_KEY, [{ threadKey: 'thread:ok', draft: draft('ok', 1) }, { threadKey: 'thread:bad', draft: { text: 'no chips' } }]);
    assert.deepEqual(store.all().map((e) => e.threadKey), ['thread:ok']);
  });
});
