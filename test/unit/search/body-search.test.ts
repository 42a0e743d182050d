import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { VoxStore } from '../../../src/engine/store/store';
import { forEachDriver } from '../../support/drivers';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { searchThreads } from '../../../src/engine/search/search';
import { indexPieces, makeSnippet, matchRanges, queryTerms, SHORT_QUERY_SCAN_DOCS } from '../../../src/engine/search/body-search';
import { activeMessageIds, stripLinks } from '../../../src/engine/search/index-sync';
import type { VoxEvent } from '../../../src/protocol/events';
import { Rng } from '../../support/random';

const NOW = 1_800_000_000_000;

function msg(threadId: string, messageId: string, parentId: string | null, role: 'user' | 'assistant', content: string, runId: string | null = null): VoxEvent {
  return { type: 'message.added', threadId, messageId, parentId, role, content, runId, status: 'complete' };
}

describe('search: text helpers', () => {
  it('reduces [label](url) and ![alt](url) to the label', () => {
    assert.equal(stripLinks('see [the docs](https://example.com/a_(b)?q=1 "Title") and ![logo](x.png), [x]'), 'see the docs and logo, [x]');
  });

  it('terms are literal; LIKE wildcards split a term into the pieces the index answers; short terms are kept apart', () => {
    assert.deepEqual(queryTerms(' Foo  "bar*" NEAR -x a '), { long: ['foo', '"bar*"', 'near'], short: ['-x', 'a'] });
    assert.deepEqual(indexPieces(['50%_off', 'near', 'a_b', 'path_name']), ['off', 'near', 'path', 'name']);
  });

  it('snippets: a window around the first match with merged ranges', () => {
    const text = `${'word '.repeat(30)}the parseConfig function\nparses config`;
    const { snippet, ranges } = makeSnippet(text, ['config', 'parse']);
    assert.ok(snippet.startsWith('…') && !snippet.includes('\n'));
    assert.deepEqual(ranges.map((r) => snippet.slice(r.start, r.end)), ['parseConfig', 'parse', 'config']);
    assert.deepEqual(matchRanges('aaaa', ['aa']), [{ start: 0, end: 4 }]);
  });
});

forEachDriver('search: the trigram index in step with the events', () => {
  let dir: string;
  let store: VoxStore;
  const search = (q: string, limit?: number) => searchThreads(store.db, q, { now: NOW, ...(limit ? { limit } : {}) });
  beforeEach(() => {
    dir = makeTmpDir();
    store = VoxStore.open(path.join(dir, 'vox.db'));
    store.append(
      { type: 'thread.created', threadId: 't1', title: 'Refactor the parser' },
      msg('t1', 'm1', null, 'user', 'Why does tokenizeInput fail on [the spec](https://spec.example.org/grammar)?'),
      { type: 'thread.created', threadId: 't2', title: 'Deploy notes' },
      msg('t2', 'm2', null, 'user', 'How do I deploy the staging cluster?'),
    );
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  it('finds substrings (trigram) inside identifiers, with a snippet, ranges and the message id', () => {
    const r = search('kenizeinp');
    assert.equal(r.messages.length, 1);
    const hit = r.messages[0]!;
    assert.equal(hit.threadId, 't1');
    assert.equal(hit.messageId, 'm1');
    assert.equal(hit.source, 'message');
    assert.equal(hit.threadTitle, 'Refactor the parser');
    assert.deepEqual(hit.ranges.map((x) => hit.snippet.slice(x.start, x.end)), ['kenizeInp']);
    assert.ok(hit.score > 0 && hit.score < 1);
  });

  it('indexes a link by its label only', () => {
    assert.equal(search('the spec').messages.length, 1);
    assert.equal(search('spec.example').messages.length, 0);
    assert.equal(search('grammar').messages.length, 0);
    assert.ok(search('the spec').messages[0]!.snippet.includes('fail on the spec?'));
  });

  it('titles and messages come back side by side', () => {
    const r = search('deploy');
    assert.deepEqual(r.titles.map((t) => [t.threadId, t.tier]), [['t2', 'substring']]);
    assert.deepEqual(r.messages.map((m) => m.messageId), ['m2']);
  });

  it('follows message.edited: the old text is gone, the new text is found', () => {
    store.append(
      { type: 'run.started', threadId: 't1', runId: 'r1', ordinal: 0, provider: 'p', model: 'm', ownerPid: process.pid, userMessageId: 'm1' },
      msg('t1', 'a1', 'm1', 'assistant', 'It fails because of a missing semicolon.', 'r1'),
    );
    assert.equal(search('semicolon').messages[0]?.messageId, 'a1');
    store.append({ type: 'message.edited', threadId: 't1', messageId: 'a1', content: 'It fails because of a stray backslash.' });
    assert.equal(search('semicolon').messages.length, 0);
    assert.equal(search('backslash').messages[0]?.messageId, 'a1');
  });

  it('indexes tool output (weighted below message text) and jumps to the run answer', () => {
    store.append(
      { type: 'run.started', threadId: 't2', runId: 'r2', ordinal: 0, provider: 'p', model: 'm', ownerPid: process.pid, userMessageId: 'm2' },
      { type: 'item.started', threadId: 't2', runId: 'r2', itemId: 'i1', ordinal: 0, kind: 'toolCall', toolName: 'run', arguments: '{}' },
      { type: 'item.completed', threadId: 't2', runId: 'r2', itemId: 'i1', status: 'completed', content: 'kubectl: cluster staging unreachable', isError: true },
      { type: 'item.started', threadId: 't2', runId: 'r2', itemId: 'i2', ordinal: 1, kind: 'text', toolName: null, arguments: null },
      { type: 'item.completed', threadId: 't2', runId: 'r2', itemId: 'i2', status: 'completed', content: 'text item unreachable', isError: false },
    );
    let hits = search('unreachable').messages;
    assert.deepEqual(hits.map((h) => [h.source, h.itemId, h.messageId]), [['tool', 'i1', 'm2']], 'text items are not tool output; before the answer, the prompt');
    store.append(msg('t2', 'a2', 'm2', 'assistant', 'The staging cluster is unreachable.', 'r2'));
    hits = search('unreachable').messages;
    assert.deepEqual(hits.map((h) => [h.source, h.messageId]), [['message', 'a2'], ['tool', 'a2']]);
    assert.ok(hits[0]!.score > hits[1]!.score);
  });

  it('the same text scores lower as tool output than as a message', () => {
    store.append(
      { type: 'run.started', threadId: 't2', runId: 'r3', ordinal: 0, provider: 'p', model: 'm', ownerPid: process.pid, userMessageId: 'm2' },
      { type: 'item.started', threadId: 't2', runId: 'r3', itemId: 'i3', ordinal: 0, kind: 'toolCall', toolName: 'run', arguments: '{}' },
      { type: 'item.completed', threadId: 't2', runId: 'r3', itemId: 'i3', status: 'completed', content: 'identical words: frobnicate the widget', isError: false },
      msg('t2', 'a3', 'm2', 'assistant', 'identical words: frobnicate the widget', 'r3'),
    );
    const hits = search('frobnicate').messages;
    assert.deepEqual(hits.map((h) => h.source), ['message', 'tool']);
    assert.ok(hits[0]!.score > hits[1]!.score, `${hits[0]!.score} > ${hits[1]!.score}`);
  });

  it('searches the active branch only, following regenerate, branch switches and rewinds', () => {
    store.append(msg('t1', 'a1', 'm1', 'assistant', 'first answer: lexer bug'));
    store.append(msg('t1', 'a2', 'm1', 'assistant', 'second answer: parser table')); // a sibling branch: a1 goes inactive
    assert.equal(search('lexer bug').messages.length, 0);
    assert.equal(search('parser table').messages.length, 1);
    store.append({ type: 'thread.branchSwitched', threadId: 't1', toMessageId: 'a1' });
    assert.equal(search('lexer bug').messages[0]?.messageId, 'a1');
    assert.equal(search('parser table').messages.length, 0);
    store.append({ type: 'thread.rewound', threadId: 't1', toMessageId: 'm1' });
    assert.equal(search('lexer bug').messages.length, 0);
    assert.equal(search('tokenize').messages.length, 1);
    store.append({ type: 'thread.rewound', threadId: 't1', toMessageId: null });
    assert.equal(search('tokenize').messages.length, 0);
  });

  it('titles follow renames, by this connection and by another process on the same file', () => {
    assert.deepEqual(search('deploy').titles.map((t) => t.threadId), ['t2']);
    store.append({ type: 'thread.renamed', threadId: 't2', title: 'Release checklist' });
    assert.deepEqual(search('deploy').titles, []);
    assert.deepEqual(search('release checklist').titles.map((t) => [t.threadId, t.tier]), [['t2', 'exact']]);
    const other = VoxStore.open(store.db.name);
    other.append({ type: 'thread.renamed', threadId: 't1', title: 'Release the parser' });
    other.close();
    assert.deepEqual(search('release').titles.map((t) => t.threadId).sort(), ['t1', 't2']);
  });

  it('drops a deleted thread from both lists', () => {
    store.append({ type: 'thread.deleted', threadId: 't2' });
    const r = search('deploy');
    assert.deepEqual([r.titles.length, r.messages.length], [0, 0]);
    assert.equal((store.db.prepare("SELECT COUNT(*) AS n FROM search_docs WHERE thread_id = 't2'").get() as { n: number }).n, 0);
  });

  it('takes FTS5 syntax in queries literally and never throws', () => {
    store.append(msg('t2', 'q1', 'm2', 'user', 'grep for "foo*" -v AND (NEAR x) col:val ^start'));
    for (const q of ['"foo*"', 'foo*', '-v', 'AND', 'NEAR(', '(NEAR x)', 'col:val', '^start', '"', '""', '*', 'OR NOT', "'; DROP TABLE x; --", '%', '_', '\\']) {
      assert.doesNotThrow(() => search(q), q);
    }
    assert.equal(search('"foo*"').messages[0]?.messageId, 'q1');
    assert.equal(search('(NEAR x)').messages[0]?.messageId, 'q1');
    assert.equal(search('col:val').messages[0]?.messageId, 'q1');
    assert.equal(search('"foo*" nothing-like-this').messages.length, 0);
    // LIKE's wildcards are literal too: "col_val" must not match "col:val", "50%" must not match "500"
    store.append(msg('t2', 'q3', 'q1', 'user', 'a discount of 500 dollars, col:val again'));
    assert.deepEqual(search('col_val').messages, []);
    assert.deepEqual(search('of 50%').messages, []);
    store.append(msg('t2', 'q4', 'q3', 'user', 'rename snake_case_name and 50% off'));
    assert.deepEqual(search('snake_case').messages.map((m) => m.messageId), ['q4']);
    assert.deepEqual(search('50% off').messages.map((m) => m.messageId), ['q4']);
    store.append(msg('t2', 'q5', 'q4', 'user', 'emoji 😀ab😀 and Ünïcödé text'));
    assert.deepEqual(search('😀ab😀').messages.map((m) => m.messageId), ['q5']);
    assert.deepEqual(search('ünïcödé').messages.map((m) => m.messageId), ['q5']);
  });

  it('a query under 3 characters scans the newest documents with LIKE; short terms filter long ones', () => {
    store.append(msg('t2', 'q2', 'm2', 'user', 'use k8s for the staging box'));
    assert.deepEqual(search('k8').messages.map((m) => m.messageId), ['q2']);
    assert.deepEqual(search('%').messages, []);
    assert.deepEqual(search('staging k8').messages.map((m) => m.messageId), ['q2']);
    assert.deepEqual(search('staging zq').messages, []);
    assert.ok(SHORT_QUERY_SCAN_DOCS >= 10_000);
  });

  it('the limit bounds each list', () => {
    for (let i = 0; i < 30; i++) store.append(msg('t2', `n${i}`, i === 0 ? 'm2' : `n${i - 1}`, 'user', `note ${i} about widgets`));
    assert.equal(search('widgets', 5).messages.length, 5);
    assert.equal(search('widgets').messages.length, 20);
  });
});

describe('search: covering trigrams', () => {
  it('covers a piece without overlap, the last three characters included, by code point', async () => {
    const { coverTrigrams } = await import('../../../src/engine/search/body-search');
    assert.deepEqual(coverTrigrams('passing'), ['pas', 'sin', 'ing']);
    assert.deepEqual(coverTrigrams('abcdef'), ['abc', 'def']);
    assert.deepEqual(coverTrigrams('a"bc'), ['a"b', '"bc']);
    assert.deepEqual(coverTrigrams('😀ab😀'), ['😀ab', 'ab😀']);
  });
});

describe('search: offsets with letters whose lower case is longer', () => {
  it('highlights the right span after an İ (which lower-cases to two code units)', () => {
    const { snippet, ranges } = makeSnippet('İstanbul has a parser', ['parser']);
    assert.deepEqual(ranges.map((r) => snippet.slice(r.start, r.end)), ['parser']);
  });
});

forEachDriver('search: the active path moves with the head, in cost of the branches only', () => {
  let dir: string;
  let store: VoxStore;
  const active = () => (store.db.prepare("SELECT message_id AS m FROM search_docs WHERE active = 1 AND kind = 'message' ORDER BY message_id").all() as { m: string }[]).map((r) => r.m);
  const fresh = () => {
    const ids = [...activeMessageIds(store.db, 'tt')].sort();
    return ids;
  };
  beforeEach(() => {
    dir = makeTmpDir();
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  it('matches a recomputation after every kind of head move (a generated tree)', () => {
    store.append({ type: 'thread.created', threadId: 'tt', title: 'tree' });
    const rng = new Rng(11);
    const rnd = (n: number) => rng.int(n);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const op = rnd(10);
      if (op < 6 || ids.length < 3) {
        const parent = ids.length === 0 || rnd(5) === 0 ? (rnd(4) === 0 ? null : ids[rnd(ids.length)] ?? null) : (store.headMessageId('tt'));
        const id = `x${i}`;
        store.append(msg('tt', id, parent, 'user', `text ${i}`));
        ids.push(id);
      } else if (op < 8) {
        store.append({ type: 'thread.branchSwitched', threadId: 'tt', toMessageId: ids[rnd(ids.length)]! });
      } else {
        store.append({ type: 'thread.rewound', threadId: 'tt', toMessageId: rnd(6) === 0 ? null : ids[rnd(ids.length)]! });
      }
      assert.deepEqual(active(), fresh(), `after step ${i}`);
    }
  });

  it('10,000 new roots in a row stay linear (each move walks one message)', () => {
    store.append({ type: 'thread.created', threadId: 'tt', title: 'roots' });
    const batch: VoxEvent[] = [];
    for (let i = 0; i < 10_000; i++) batch.push(msg('tt', `r${i}`, null, 'user', `root ${i}`));
    for (let i = 0; i < batch.length; i += 1_000) store.append(...batch.slice(i, i + 1_000));
    assert.deepEqual(active(), ['r9999']);
  });
});
