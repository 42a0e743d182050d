/**
 * The restore journal's edges (src/engine/checkpoints/restore-journal.ts) on real files: whether
 * a start looks for one at all (the nearest `.git` folder, or the git dir a linked worktree's
 * `.git` file names — no git process), what the user is told, and a journal that cannot be
 * read: removed and reported. Finishing a real interrupted
 * restore is test/integration/restore-interrupted.test.ts.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RESTORE_JOURNAL_FILE, clearRestoreJournal, describeRestoreTarget, journalMayExist, readRestoreJournal, recoveryMessage, writeRestoreJournal, type RestoreJournal } from '../../src/engine/checkpoints/restore-journal';
import { checkpointRef } from '../../src/engine/checkpoints/refs';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('restore journal', () => {
  let dir: string;
  beforeEach(() => (dir = fs.realpathSync(makeTmpDir())));
  afterEach(() => removeTmpDir(dir));

  it('is looked for in the nearest .git folder, or the git dir a .git file names', () => {
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'src/deep'), { recursive: true });
    assert.equal(journalMayExist(path.join(ws, 'src/deep')), false);
    fs.writeFileSync(path.join(ws, '.git', RESTORE_JOURNAL_FILE), '{}');
    assert.equal(journalMayExist(path.join(ws, 'src/deep')), true);
    // A linked worktree: `.git` is a file naming its git dir (relative here).
    const linked = path.join(dir, 'linked');
    fs.mkdirSync(path.join(dir, 'gitdirs/linked'), { recursive: true });
    fs.mkdirSync(linked);
    fs.writeFileSync(path.join(linked, '.git'), 'gitdir: ../gitdirs/linked\n');
    assert.equal(journalMayExist(linked), false);
    fs.writeFileSync(path.join(dir, 'gitdirs/linked', RESTORE_JOURNAL_FILE), '{}');
    assert.equal(journalMayExist(linked), true);
  });

  it('names the target: a checkpoint of a thread, or the restore point an undo went back to', () => {
    assert.equal(describeRestoreTarget(checkpointRef('thread:a b', 3)), 'checkpoint 3 of thread thread:a b');
    assert.match(describeRestoreTarget('refs/vox/restore-points/20250102T030405678Z-0-abc'), /state saved in refs\/vox\/restore-points\/.* \(an undo\)/);
  });

  it('a journal that cannot be read is removed and reported; a readable one round-trips', async () => {
    const gitDir = path.join(dir, '.git');
    fs.mkdirSync(gitDir);
    const top = { root: dir, gitDir, indexPath: path.join(gitDir, 'index') };
    fs.writeFileSync(path.join(gitDir, RESTORE_JOURNAL_FILE), '{"version":1,"restorePoint":');
    assert.equal(await readRestoreJournal(top), 'unreadable');
    assert.match(recoveryMessage(top, 'unreadable', { error: '' }), /interrupted, and its journal could not be read \(removed\).*undo the newest restore point/);
    assert.ok(!fs.existsSync(path.join(gitDir, RESTORE_JOURNAL_FILE)));
    assert.equal(await readRestoreJournal(top), null, 'nothing left to finish');
    const journal: RestoreJournal = { version: 1, restorePoint: 'refs/vox/restore-points/x', target: checkpointRef('t', 1), targetCommit: 'ab'.repeat(20), timeMs: 1, repos: [{ root: dir, from: 'cd'.repeat(20), to: 'ef'.repeat(20) }] };
    writeRestoreJournal(top, journal);
    assert.deepEqual(fs.readdirSync(gitDir), [RESTORE_JOURNAL_FILE], 'written aside and renamed into place');
    assert.deepEqual(await readRestoreJournal(top), journal);
    assert.match(recoveryMessage(top, journal, { files: 1, asFound: 'refs/vox/restore-points/y' }), /Vox finished it: the files now match checkpoint 1 of thread t \(1 path written\)\. The state before that restore is saved in refs\/vox\/restore-points\/x .* as found in refs\/vox\/restore-points\/y/);
    assert.match(recoveryMessage(top, journal, { error: 'disk full.' }), /finishing it failed: disk full\. The state before it is saved in refs\/vox\/restore-points\/x/);
    clearRestoreJournal(top);
    clearRestoreJournal(top); // twice is fine
    assert.deepEqual(fs.readdirSync(gitDir), []);
  });
});
