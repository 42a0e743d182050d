/** The human lines of `vox search` (src/cli/search-output.ts): one line per hit, bold only on a terminal, cut to the width, short ids unique among those shown. */
import { strict as assert } from 'node:assert';
import { searchLines, snippetLine } from '../../../src/cli/search-output';
import { shortIds } from '../../../src/protocol/short-ids';

describe('vox search output', () => {
  const hit = { snippet: 'the   cookie\n\texpires  too early', ranges: [{ start: 6, end: 12 }] };

  it('collapses white space; bold around the match only on a terminal', () => {
    assert.equal(snippetLine(hit, 80, false), 'the cookie expires too early');
    assert.equal(snippetLine(hit, 80, true), 'the \u001b[1mcookie\u001b[22m expires too early');
  });

  it('cuts to the width around the first match, with … where cut', () => {
    const long = { snippet: `${'a '.repeat(100)}needle ${'b '.repeat(100)}`, ranges: [{ start: 200, end: 206 }] };
    const line = snippetLine(long, 40, false);
    assert.equal(line.length, 40);
    assert.ok(line.startsWith('…') && line.endsWith('…') && line.includes('needle'), line);
  });

  it('short ids: 8 characters of the random part, longer where two shown share them', () => {
    const ids = shortIds(['thread:abcd1234-aaaa', 'thread:abcd1234-bbbb', 'thread:ffff0000-cccc', 'thread:source:codex:session:9e8d7c6b-1']);
    assert.deepEqual([...ids.values()], ['abcd1234-a', 'abcd1234-b', 'ffff0000', '9e8d7c6b']);
    const lines = searchLines({ titles: [], messages: [{ threadId: 'thread:ffff0000-cccc', threadTitle: 'A title', messageId: null, itemId: null, source: 'tool', snippet: 'x y', ranges: [], score: 1 }] }, { tty: false, width: 80 });
    assert.deepEqual(lines, ['Messages:', '  ffff0000  [tool output] A title', '    x y']);
  });
});
