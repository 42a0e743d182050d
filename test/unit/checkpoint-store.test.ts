/**
 * Pure parts of the checkpoint store (SPEC §4.2): thread ids as ref components, checkpoint and
 * restore point ref names, commit-message metadata round trips (including paths that are not
 * valid UTF-8 or contain newlines), and gitlink parsing. The git-backed behaviour is covered by
 * test/integration/checkpoints.test.ts and checkpoint-property.test.ts.
 */
import { strict as assert } from 'node:assert';
import {
  MAX_THREAD_REF_COMPONENT_BYTES,
  checkpointRef,
  decodeThreadRefComponent,
  emptyMeta,
  encodeThreadIdForRef,
  formatCommitMessage,
  parseCheckpointRef,
  parseCommitMessage,
  restorePointRef,
  validateThreadId,
} from '../../src/engine/checkpoints/refs';
import { gitlinksFromStage } from '../../src/engine/checkpoints/nested-repos';
import { CheckpointError, MAX_THREAD_ID_LENGTH, repoPath } from '../../src/engine/checkpoints/types';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CheckpointError);
    return err.code;
  }
  return 'none';
}

describe('checkpoint refs and metadata', () => {
  it('encodes thread ids as one ref component that decodes back exactly', () => {
    assert.equal(encodeThreadIdForRef('thread:abc'), 'thread%3Aabc');
    assert.equal(encodeThreadIdForRef('subagent:parent:thread%3Ax'), 'subagent%3Aparent%3Athread%253Ax');
    for (const id of ['a', 'x.lock', '..', 'a/b', 'ünï', '😀 emoji', '@{u}', 'HEAD', '-rf']) {
      const c = encodeThreadIdForRef(id);
      assert.match(c, /^[A-Za-z0-9_%-]+$/, id);
      assert.equal(decodeThreadRefComponent(c), id);
    }
  });

  it('hashes ids whose encoding would be too long, in a form plain encoding never produces', () => {
    const id = `thread:${'é'.repeat(150)}`;
    const c = encodeThreadIdForRef(id);
    assert.match(c, /^%hash-[0-9a-f]{64}$/);
    assert.ok(c.length <= MAX_THREAD_REF_COMPONENT_BYTES);
    assert.equal(encodeThreadIdForRef(id), c, 'deterministic');
    assert.equal(decodeThreadRefComponent(c), null);
  });

  it('refuses bad thread ids with badThreadId', () => {
    assert.equal(code(() => validateThreadId('')), 'badThreadId');
    assert.equal(code(() => validateThreadId('a\nb')), 'badThreadId');
    assert.equal(code(() => validateThreadId('a\u007fb')), 'badThreadId');
    assert.equal(code(() => validateThreadId('lone \ud800 surrogate')), 'badThreadId');
    assert.equal(code(() => validateThreadId('x'.repeat(MAX_THREAD_ID_LENGTH + 1))), 'badThreadId');
    assert.equal(code(() => validateThreadId(42 as unknown as string)), 'badThreadId');
    assert.equal(code(() => validateThreadId('thread:ok 😀')), 'none');
  });

  it('builds and parses checkpoint refs', () => {
    assert.equal(checkpointRef('thread:a', 3), 'refs/vox/checkpoints/thread%3Aa/3');
    assert.deepEqual(parseCheckpointRef('refs/vox/checkpoints/thread%3Aa/3'), { threadComponent: 'thread%3Aa', ordinal: 3 });
    assert.equal(parseCheckpointRef('refs/vox/checkpoints/thread%3Aa/03'), null);
    assert.equal(parseCheckpointRef('refs/vox/checkpoints/a/b/3'), null);
    assert.equal(parseCheckpointRef('refs/heads/main'), null);
    assert.equal(code(() => checkpointRef('t', -1)), 'badArgument');
    assert.equal(code(() => checkpointRef('t', 1.5)), 'badArgument');
  });

  it('names restore points by sortable UTC time, sequence and random suffix', () => {
    const a = restorePointRef(Date.UTC(2025, 0, 2, 3, 4, 5, 678), 0, 'abcdef');
    assert.equal(a, 'refs/vox/restore-points/20250102T030405678Z-0-abcdef');
    const b = restorePointRef(Date.UTC(2025, 0, 2, 3, 4, 5, 678), 1, 'abcdef');
    assert.notEqual(a, b, 'same millisecond, different names');
    assert.ok(restorePointRef(Date.UTC(2025, 0, 2, 3, 4, 5, 679), 0, '000000') > a);
  });

  it('round-trips metadata through the commit message, including odd paths', () => {
    const odd = Buffer.from([0x62, 0xff, 0x0a, 0x63]); // "b\xff\nc"
    const meta = {
      ...emptyMeta('checkpoint', 1_700_000_000_123),
      threadId: 'thread:x',
      ordinal: 4,
      trigger: { kind: 'tool' as const, toolName: 'write\nfile' },
      changedCount: 2,
      changed: [{ ...repoPath(Buffer.from('a.txt')), status: 'modified' as const }, { ...repoPath(odd), status: 'added' as const }],
      skipped: [{ ...repoPath(Buffer.from('big file.bin')), bytes: 12_345_678 }],
      nested: [{ ...repoPath(Buffer.from('libs/sub')), commit: 'a'.repeat(40) }],
    };
    const msg = formatCommitMessage(meta);
    const lines = msg.split('\n');
    assert.equal(lines[0], 'vox-checkpoint:thread:x:4');
    assert.ok(lines.includes('Trigger: tool write file'), 'summary is one line per field');
    const back = parseCommitMessage(msg);
    assert.ok(back);
    assert.equal(back.threadId, 'thread:x');
    assert.equal(back.ordinal, 4);
    assert.deepEqual(back.trigger, meta.trigger);
    assert.equal(back.timeMs, meta.timeMs);
    assert.ok(back.changed[1]!.raw.equals(odd));
    assert.equal(back.changed[1]!.status, 'added');
    assert.deepEqual(back.skipped.map((s) => [s.path, s.bytes]), [['big file.bin', 12_345_678]]);
    assert.equal(back.nested[0]!.commit, 'a'.repeat(40));
    assert.equal(parseCommitMessage('a user commit\n\nVox-Meta: not json\n'), null);
    assert.equal(parseCommitMessage('fix: something\n'), null);
  });

  it('finds gitlinks in `ls-files -s -z` output', () => {
    const out = Buffer.concat([
      Buffer.from(`100644 ${'1'.repeat(40)} 0\ta.txt\0`),
      Buffer.from(`160000 ${'2'.repeat(40)} 0\tlibs/sub\0`),
      Buffer.from(`160000 ${'3'.repeat(40)} 0\t`),
      Buffer.from([0x6e, 0xff, 0x0a, 0x00]),
      Buffer.from(`120000 ${'4'.repeat(40)} 0\t160000 tricky\0`),
    ]);
    assert.deepEqual(gitlinksFromStage(out).map((b) => b.toString('latin1')), ['libs/sub', Buffer.from([0x6e, 0xff, 0x0a]).toString('latin1')]);
  });
});
