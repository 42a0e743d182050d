/**
 * Tests for src/engine/ids/ids.ts: exact percent-encoding, round trips, validation errors,
 * uuid allocation and deterministic replay of derived ids.
 */
import assert from 'node:assert/strict';
import {
  IdError,
  allocate,
  decodeIdSegment,
  derive,
  derivedValue,
  deriveNodeFromProviderItem,
  deriveRunAttempt,
  deriveRunFromThreadOrdinal,
  deriveSubagentFromTask,
  deriveTurnItemFromProviderItem,
  encodeIdSegment,
  parseDerived,
} from '../../src/engine/ids/ids';
import { seededRandom } from '../support/random';
import { assertThrowsCode } from '../support/assert-code';

const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('ids: encoding', () => {
  it('encodes exactly as RFC 3986 unreserved + %XX upper-case over UTF-8', () => {
    assert.equal(encodeIdSegment(' '), '%20');
    assert.equal(encodeIdSegment('é'), '%C3%A9');
    assert.equal(encodeIdSegment('😀'), '%F0%9F%98%80');
    assert.equal(encodeIdSegment('~-._'), '~-._');
    assert.equal(encodeIdSegment("!*'()"), '%21%2A%27%28%29');
    assert.equal(encodeIdSegment('%'), '%25');
    assert.equal(encodeIdSegment(':'), '%3A');
    assert.equal(encodeIdSegment('/?#[]@&=+$,;'), '%2F%3F%23%5B%5D%40%26%3D%2B%24%2C%3B');
    assert.equal(encodeIdSegment('AZaz09'), 'AZaz09');
    assert.equal(encodeIdSegment(''), '');
    assert.equal(encodeIdSegment('\u0000\u007f'), '%00%7F');
    assert.equal(encodeIdSegment('\uFEFFx'), '%EF%BB%BFx');
  });

  it('encodes lone surrogates as U+FFFD instead of throwing', () => {
    assert.equal(encodeIdSegment('\uD800'), '%EF%BF%BD');
    assert.equal(encodeIdSegment('a\uDC00b'), 'a%EF%BF%BDb');
    assert.equal(decodeIdSegment(encodeIdSegment('x\uD83D')), 'x\uFFFD');
    assert.equal(derive('p', [['k', '\uDFFF\uD800']]), 'p:k:%EF%BF%BD%EF%BF%BD');
  });

  it('round-trips 10,000 random strings including surrogate pairs', () => {
    const next = seededRandom(1234);
    const ranges: [number, number][] = [
      [0x00, 0x7f],
      [0x80, 0x7ff],
      [0x800, 0xd7ff],
      [0xe000, 0xffff],
      [0x10000, 0x10ffff],
    ];
    for (let n = 0; n < 10_000; n++) {
      const len = Math.floor(next() * 20);
      let s = '';
      for (let i = 0; i < len; i++) {
        const [lo, hi] = ranges[Math.floor(next() * ranges.length)] as [number, number];
        s += String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)));
      }
      const enc = encodeIdSegment(s);
      assert.match(enc, /^(?:[A-Za-z0-9\-_.~]|%[0-9A-F]{2})*$/);
      assert.equal(decodeIdSegment(enc), s);
      const id = derive('p', [['a', s], ['b', s + ':']]);
      assert.deepEqual(parseDerived(id), { prefix: 'p', pairs: [['a', s], ['b', s + ':']] });
    }
  });

  it('rejects segments encodeIdSegment could not have produced', () => {
    for (const bad of ['%', '%4', '%zz', '%c3%a9', '%41', 'a b', 'é', '!', '%C3', '%FF', '%C0%AF', '%ED%A0%80']) {
      assertThrowsCode(() => decodeIdSegment(bad), 'id/invalidEncoding', IdError);
    }
  });
});

describe('ids: derive / parseDerived', () => {
  it('builds prefix:k1:enc(v1):k2:enc(v2)', () => {
    assert.equal(derive('run', [['thread', 'thread:abc'], ['ordinal', '3']]), 'run:thread:thread%3Aabc:ordinal:3');
    assert.equal(derive('x', [['k', '']]), 'x:k:');
    assert.deepEqual(parseDerived('x:k:'), { prefix: 'x', pairs: [['k', '']] });
  });

  it('validates prefixes and keys', () => {
    assertThrowsCode(() => derive('', [['k', 'v']]), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => derive('a:b', [['k', 'v']]), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => derive('ü', [['k', 'v']]), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => allocate(''), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => allocate('has space'), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => derive('p', [['', 'v']]), 'id/invalidKey', IdError);
    assertThrowsCode(() => derive('p', [['k:', 'v']]), 'id/invalidKey', IdError);
    assertThrowsCode(() => derive('p', [['k', 'v'], ['k', 'w']]), 'id/duplicateKey', IdError);
    assertThrowsCode(() => derive('p', []), 'id/malformedId', IdError);
  });

  it('parseDerived rejects garbage with typed errors', () => {
    assertThrowsCode(() => parseDerived(''), 'id/malformedId', IdError);
    assertThrowsCode(() => parseDerived('run'), 'id/malformedId', IdError);
    assertThrowsCode(() => parseDerived(allocate('run')), 'id/malformedId', IdError);
    assertThrowsCode(() => parseDerived('run:k:v:extra'), 'id/malformedId', IdError);
    assertThrowsCode(() => parseDerived(42 as unknown as string), 'id/malformedId', IdError);
    assertThrowsCode(() => parseDerived(':k:v'), 'id/invalidPrefix', IdError);
    assertThrowsCode(() => parseDerived('run::v'), 'id/invalidKey', IdError);
    assertThrowsCode(() => parseDerived('run:k:v:k:w'), 'id/duplicateKey', IdError);
    assertThrowsCode(() => parseDerived('run:k:a%2'), 'id/invalidEncoding', IdError);
    assertThrowsCode(() => parseDerived('run:k:a b'), 'id/invalidEncoding', IdError);
  });

  it('derived constructors read well, validate, and nest', () => {
    const thread = 'thread:0b7c…';
    const run = deriveRunFromThreadOrdinal(thread, 2);
    assert.equal(run, 'run:thread:thread%3A0b7c%E2%80%A6:ordinal:2');
    const attempt = deriveRunAttempt(run, 0);
    assert.equal(attempt, `attempt:run:${encodeIdSegment(run)}:ordinal:0`);
    assert.equal(derivedValue(attempt, 'run'), run);
    assert.equal(derivedValue(derivedValue(attempt, 'run') as string, 'thread'), thread);
    assert.equal(derivedValue(attempt, 'missing'), undefined);
    assert.equal(
      deriveNodeFromProviderItem('t1', 'openai', 'item_9'),
      'node:thread:t1:provider:openai:item:item_9',
    );
    assert.equal(
      deriveTurnItemFromProviderItem('turn:1', 'anthropic', 'toolu_01/x'),
      'item:turn:turn%3A1:provider:anthropic:item:toolu_01%2Fx',
    );
    assert.equal(deriveSubagentFromTask('t1', 'task 7'), 'subagent:parent:t1:task:task%207');

    assertThrowsCode(() => deriveRunFromThreadOrdinal('t', -1), 'id/invalidOrdinal', IdError);
    assertThrowsCode(() => deriveRunFromThreadOrdinal('t', 1.5), 'id/invalidOrdinal', IdError);
    assertThrowsCode(() => deriveRunFromThreadOrdinal('t', Number.NaN), 'id/invalidOrdinal', IdError);
    assertThrowsCode(() => deriveRunFromThreadOrdinal('t', 2 ** 53), 'id/invalidOrdinal', IdError);
    assertThrowsCode(() => deriveRunAttempt('r', Infinity), 'id/invalidOrdinal', IdError);
    assert.equal(deriveRunAttempt('r', Number.MAX_SAFE_INTEGER), 'attempt:run:r:ordinal:9007199254740991');
    assertThrowsCode(() => deriveRunFromThreadOrdinal('', 0), 'id/emptyValue', IdError);
    assertThrowsCode(() => deriveNodeFromProviderItem('t', '', 'i'), 'id/emptyValue', IdError);
    assertThrowsCode(() => deriveTurnItemFromProviderItem('t', 'p', ''), 'id/emptyValue', IdError);
    assertThrowsCode(() => deriveSubagentFromTask('t', ''), 'id/emptyValue', IdError);
  });
});

describe('ids: allocate', () => {
  it('is prefix:<uuid v4> and unique', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = allocate('thread');
      const [prefix, uuid] = id.split(':');
      assert.equal(prefix, 'thread');
      assert.match(uuid as string, UUID_V4_RE);
      seen.add(id);
    }
    assert.equal(seen.size, 1000);
  });
});

describe('ids: deterministic replay', () => {
  type SyntheticEvent =
    | { t: 'thread'; threadId: string }
    | { t: 'run'; threadId: string }
    | { t: 'attempt'; runIndex: number }
    | { t: 'providerItem'; runIndex: number; provider: string; itemId: string }
    | { t: 'subagent'; threadId: string; taskId: string };

  function syntheticEvents(count: number, seed: number): SyntheticEvent[] {
    const next = seededRandom(seed);
    const providers = ['openai', 'anthropic', 'local:llama', 'vscode.lm'];
    const threads: string[] = [];
    let runs = 0;
    const events: SyntheticEvent[] = [];
    while (events.length < count) {
      const r = next();
      if (threads.length === 0 || r < 0.1) {
        // Thread ids arrive from outside (allocated once, then persisted in the log).
        const threadId = `thread:${Math.floor(next() * 1e9).toString(16)}-ü`;
        threads.push(threadId);
        events.push({ t: 'thread', threadId });
      } else if (runs === 0 || r < 0.35) {
        events.push({ t: 'run', threadId: threads[Math.floor(next() * threads.length)] as string });
        runs++;
      } else if (r < 0.5) {
        events.push({ t: 'attempt', runIndex: Math.floor(next() * runs) });
      } else if (r < 0.9) {
        events.push({
          t: 'providerItem',
          runIndex: Math.floor(next() * runs),
          provider: providers[Math.floor(next() * providers.length)] as string,
          itemId: `item_${Math.floor(next() * 1e6)}/${String.fromCodePoint(0x1f600 + Math.floor(next() * 50))}`,
        });
      } else {
        events.push({
          t: 'subagent',
          threadId: threads[Math.floor(next() * threads.length)] as string,
          taskId: `task ${Math.floor(next() * 1e4)}`,
        });
      }
    }
    return events;
  }

  /** Projects the event stream into ids using only derive*; no lookup table of minted ids. */
  function replay(events: readonly SyntheticEvent[]): string[] {
    const out: string[] = [];
    const runOrdinalByThread = new Map<string, number>();
    const runs: { runId: string; threadId: string; attempts: number }[] = [];
    for (const e of events) {
      switch (e.t) {
        case 'thread':
          out.push(e.threadId);
          break;
        case 'run': {
          const ordinal = runOrdinalByThread.get(e.threadId) ?? 0;
          runOrdinalByThread.set(e.threadId, ordinal + 1);
          const runId = deriveRunFromThreadOrdinal(e.threadId, ordinal);
          runs.push({ runId, threadId: e.threadId, attempts: 0 });
          out.push(runId);
          break;
        }
        case 'attempt': {
          const run = runs[e.runIndex];
          assert.ok(run);
          out.push(deriveRunAttempt(run.runId, run.attempts++));
          break;
        }
        case 'providerItem': {
          const run = runs[e.runIndex];
          assert.ok(run);
          out.push(deriveNodeFromProviderItem(run.threadId, e.provider, e.itemId));
          out.push(deriveTurnItemFromProviderItem(run.runId, e.provider, e.itemId));
          break;
        }
        case 'subagent':
          out.push(deriveSubagentFromTask(e.threadId, e.taskId));
          break;
      }
    }
    return out;
  }

  it('derives identical ids from the same 1,000-event stream', () => {
    const events = syntheticEvents(1000, 42);
    assert.equal(events.length, 1000);
    const first = replay(events);
    const second = replay(structuredClone(events));
    assert.deepEqual(second, first);
    assert.ok(first.length >= 1000);

    // Runs and attempts are distinct per position; every derived id parses back to its inputs.
    const runIds = first.filter((id) => id.startsWith('run:'));
    assert.equal(new Set(runIds).size, runIds.length);
    const attemptIds = first.filter((id) => id.startsWith('attempt:'));
    assert.equal(new Set(attemptIds).size, attemptIds.length);
    for (const id of first) {
      if (id.startsWith('thread:')) continue;
      assert.equal(derive(parseDerived(id).prefix, parseDerived(id).pairs), id);
    }

    // A different stream yields different ids (the replay is not trivially constant).
    assert.notDeepEqual(replay(syntheticEvents(1000, 43)), first);
  });
});
