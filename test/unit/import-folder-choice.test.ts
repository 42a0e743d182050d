/**
 * The decisions of "Vox: Import Sessions…" (src/extension/import-folder-choice.ts): the QuickPick
 * always ends with "Choose a folder…" (alone when the standard places hold nothing), a chosen
 * folder's kind is read from what it holds, and what was picked becomes the folder flow or the ids
 * to import — with the chosen folders on every import call, as on the scan.
 */
import { strict as assert } from 'node:assert';
import { afterPick, detectImportKinds, importPickEntries, importPickPlaceholder, importParams } from '../../src/extension/import-folder-choice';
import type { ScannedSessionView } from '../../src/protocol/commands/importers';

const session = (id: string, imported: ScannedSessionView['imported'] = 'no'): ScannedSessionView => ({ id, source: 'codex', project: null, date: 1, title: id, size: 1, files: 1, imported });

describe('Import Sessions: choosing a folder', () => {
  it('offers "Choose a folder…" last, and alone when nothing was found at the standard places', () => {
    assert.deepEqual(importPickEntries([]), [{ kind: 'chooseFolder' }]);
    assert.deepEqual(importPickEntries([session('codex:a'), session('codex:b')]).map((e) => e.kind), ['session', 'session', 'chooseFolder']);
    const sources = [{ source: 'codex', dir: '/h/.codex', error: null, skipped: [] }];
    assert.match(importPickPlaceholder({ sessions: [], sources }, null), /No sessions found in \/h\/\.codex.*choose a folder/i);
    assert.match(importPickPlaceholder({ sessions: [session('codex:a')], sources: [] }, '/x/codex-home'), /1 session found in \/x\/codex-home/);
  });

  it('reads the kind from what the folder holds; none recognised asks', () => {
    assert.deepEqual(detectImportKinds(['projects', 'settings.json']), ['claude-code']);
    assert.deepEqual(detectImportKinds(['sessions', 'config.toml']), ['codex']);
    assert.deepEqual(detectImportKinds(['chats']), ['cursor']);
    assert.deepEqual(detectImportKinds(['projects', 'sessions']), ['claude-code', 'codex']);
    assert.deepEqual(detectImportKinds(['notes.txt']), []);
  });

  it('a pick with "Choose a folder…" goes to the folder; otherwise its session ids, with the chosen folders on each call', () => {
    const entries = importPickEntries([session('codex:a'), session('codex:b')]);
    assert.deepEqual(afterPick([entries[0]!, entries[2]!]), { chooseFolder: true, ids: ['codex:a'] });
    assert.deepEqual(afterPick([entries[1]!]), { chooseFolder: false, ids: ['codex:b'] });
    assert.deepEqual(importParams(null, ['codex:a']), { ids: ['codex:a'] });
    assert.deepEqual(importParams({ dir: '/x', kinds: ['codex'] }, ['codex:a']), { ids: ['codex:a'], folders: [{ source: 'codex', dir: '/x' }] });
  });
});
