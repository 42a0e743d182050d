import { strict as assert } from 'node:assert';
import { applyEvents, createThreadState } from '../../webview/src/lib/thread-state';
import { SearchRequests, mergeResults, revealIndex, snippetParts, type SearchResult } from '../../webview/src/lib/thread-search';
import type { ClientCommand } from '../../src/protocol/commands/index';
import { longThreadEvents } from './support/long-thread';

const T = 'thread:s';

describe('webview search: requests, reveal, merged rows', () => {
  it('delivers only the newest search answer; an older one is swallowed, other commands are not', () => {
    const sent: ClientCommand[] = [];
    let n = 0;
    const req = new SearchRequests((c) => (sent.push(c), `w${++n}`));
    const got: (string | null)[] = [];
  const seen = () => [...got];
    req.search('ab', (r) => got.push(r ? `ab:${r.titles.length}` : null));
    req.search('abc', (r, e) => got.push(r ? `abc:${r.titles.length}` : `error:${e}`));
    assert.deepEqual(sent.map((c) => c.type === 'searchThreads' && c.query), ['ab', 'abc']);
    const none: SearchResult = { titles: [], messages: [] };
    assert.equal(req.onResult('w1', 'searchThreads', none), true); // stale: swallowed
    assert.deepEqual(seen(), []);
    assert.equal(req.onResult('w2', 'searchThreads', none), true);
    assert.deepEqual(seen(), ['abc:0']);
    assert.equal(req.onResult('w3', 'listThreads', none), false);
    req.search('zz', (r, e) => got.push(r ? 'zz' : `error:${e}`));
    assert.equal(req.onError('w3', 'searchThreads', 'bad query'), true);
    assert.deepEqual(seen(), ['abc:0', 'error:bad query']);
    req.search('q', () => got.push('late'));
    req.cancel();
    req.onResult('w4', 'searchThreads', none);
    assert.equal(got.length, 2);
  });

  it('finds the entry of a user message and of an answer inside its run; -1 off the branch', () => {
    const state = createThreadState(T);
    applyEvents(state, longThreadEvents({ threadId: T, messages: 20 }));
    assert.equal(revealIndex(state, 'm:u3'), 6);
    assert.equal(revealIndex(state, 'm:a3'), 7);
    assert.equal(revealIndex(state, 'm:nope'), -1);
  });

  it('merges titles and messages best first (a title ahead on a tie) and cuts snippets into marked parts', () => {
    const rows = mergeResults({
      titles: [{ threadId: 'a', title: 'A', updatedAt: 1, score: 0.9, tier: 'prefix' }],
      messages: [
        { threadId: 'b', threadTitle: 'B', messageId: 'mb', itemId: null, source: 'message', snippet: 'x', ranges: [], score: 0.95 },
        { threadId: 'c', threadTitle: 'C', messageId: 'mc', itemId: 'i', source: 'tool', snippet: 'y', ranges: [], score: 0.9 },
      ],
    });
    assert.deepEqual(rows.map((r) => r.threadId), ['b', 'a', 'c']);
    assert.deepEqual(snippetParts('find the needle here', [{ start: 9, end: 15 }]), [
      { text: 'find the ', hit: false }, { text: 'needle', hit: true }, { text: ' here', hit: false },
    ]);
    assert.deepEqual(snippetParts('abc', [{ start: 2, end: 9 }]), [{ text: 'abc', hit: false }], 'a range outside the text is ignored');
  });
});
