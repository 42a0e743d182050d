/**
 * Compaction's pure parts and its storage: the path logic shared with the webview (which
 * compactions apply, widening, the compacted path), the summary shape check, history built with a
 * compaction, migration 11 on a schema-10 file, and a tool call's thought signature (random bytes
 * in base64 plus non-ASCII text) stored by `item.started` and replayed by `rebuildTurn` byte for
 * byte — also after the thread was compacted.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { activeCompactions, compactPath, normaliseSummary, summaryMessageText, summaryProblem, widenRange, type CompactionSpan } from '../../src/protocol/compaction';
import { buildHistory, HISTORY_MESSAGE_LIMIT } from '../../src/engine/conversation/history';
import { rebuildTurn } from '../../src/engine/agent/resume';
import { MIGRATIONS } from '../../src/engine/store/migrations';
import { LATEST_SCHEMA_VERSION } from '../../src/engine/modules';
import { VoxStore, type MessageRow } from '../../src/engine/store/store';
import { toOpenAIMessages } from '../../src/engine/providers/openai';
import { seededBytes, seededRandom } from '../support/random';
import { tokenUpperBound } from '../../src/engine/compaction/auto';
import { countPrompt } from '../../src/engine/providers/token-count';
import type { ChatMessage, ResolvedModel } from '../../src/engine/providers/types';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const SUMMARY = '## Goal\nA\n\n## Decisions\nB\n\n## Files touched\nC\n\n## Open items\nNone.';
const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `m${i}` }));
const span = (id: string, from: number, to: number): CompactionSpan => ({ compactionId: id, fromMessageId: `m${from}`, upToMessageId: `m${to}`, summary: `S-${id}` });

describe('compaction: path logic', () => {
  it('replaces each active range by one summary; a newer compaction supersedes an older one it overlaps', () => {
    const p = ids(10);
    const units = compactPath(p, [span('a', 0, 3), span('b', 6, 9)]);
    assert.deepEqual(units.map((u) => (u.kind === 'summary' ? `${u.compaction.compactionId}:${u.covered}` : u.message.id)), ['a:4', 'm4', 'm5', 'b:4']);
    assert.deepEqual(activeCompactions(p, [span('a', 0, 3), span('c', 0, 7)]).map((c) => c.compaction.compactionId), ['c']);
    // Ends not on the path (another branch): not applied.
    assert.deepEqual(compactPath(p.slice(0, 5), [span('b', 6, 9)]).length, 5);
  });

  it('widens a range that cuts an earlier compaction, and lists what it supersedes', () => {
    const p = ids(20);
    assert.deepEqual(widenRange(p, [span('a', 5, 12)], 0, 8), { from: 0, to: 12, supersedes: ['a'] });
    assert.deepEqual(widenRange(p, [span('a', 5, 12)], 10, 19), { from: 5, to: 19, supersedes: ['a'] });
    assert.deepEqual(widenRange(p, [span('a', 5, 12), span('b', 14, 16)], 0, 14), { from: 0, to: 16, supersedes: ['a', 'b'] });
    assert.deepEqual(widenRange(p, [span('a', 5, 12)], 13, 15), { from: 13, to: 15, supersedes: [] });
  });

  it('accepts exactly the four sections in order, each with content', () => {
    assert.equal(summaryProblem(SUMMARY), null);
    assert.equal(summaryProblem(`# Summary\n\n${SUMMARY}`), null);
    assert.equal(summaryProblem(normaliseSummary(`<think>hm</think>\n\`\`\`markdown\n${SUMMARY}\n\`\`\``)), null);
    assert.match(summaryProblem('')!, /empty/);
    assert.match(summaryProblem('I am sorry, I cannot summarise this.')!, /found none/);
    assert.match(summaryProblem(SUMMARY.replace('## Decisions', '## Choices'))!, /in that order/);
    assert.match(summaryProblem(SUMMARY.replace('B\n', ''))!, /"Decisions" is empty/);
    assert.match(summaryProblem(`Here you go:\n${SUMMARY}`)!, /before the first section/);
    assert.match(summaryProblem(`${SUMMARY}\n## Goal\nagain`)!, /in that order/);
    assert.match(summaryProblem(SUMMARY + 'x'.repeat(30_000))!, /characters/);
  });
});

function row(i: number, role: 'user' | 'assistant'): MessageRow {
  return { id: `m${i}`, threadId: 't', parentId: i === 0 ? null : `m${i - 1}`, role, content: `c${i}`, runId: null, status: 'complete', createdAt: i, editedAt: null };
}

describe('compaction: history', () => {
  it('a summary is kept when the history limit cuts what it stands for', () => {
    const p = Array.from({ length: 100 }, (_, i) => row(i, i % 2 === 0 ? 'user' : 'assistant'));
    const h = buildHistory(p, 'sys', () => [], [span('a', 0, 9)]);
    assert.equal(h.length, 1 + 1 + HISTORY_MESSAGE_LIMIT);
    assert.equal(h[1]!.content, summaryMessageText('S-a', 10));
    assert.equal(h[2]!.content, `c${100 - HISTORY_MESSAGE_LIMIT}`);
  });
});

describe('compaction: the bound that skips counting', () => {
  it('is never below the exact count (o200k_base and cl100k_base) of text in several scripts, code and random bytes', async () => {
    const rand = seededRandom(77);
    const samples = ['plain English words and code: const x = f(y) + 1;', '中文文本，没有空格的句子。日本語のテキスト。', 'emoji 😀👍🏽🇫🇷 and ZWJ 👨‍👩‍👧', '====|---|---|}}}}}}}}0000000000', seededBytes(rand, 2_000).toString('latin1'), seededBytes(rand, 900).toString('base64')];
    const messages: ChatMessage[] = [{ role: 'system', content: 'sys' }, ...samples.map((content, i): ChatMessage => (i % 2 ? { role: 'assistant', content } : { role: 'user', content }))];
    for (const model of ['gpt-4o', 'gpt-4']) {
      const resolved = { provider: { id: 'openai', isLocal: false, stream: () => { throw new Error('no'); } }, model, label: `openai:${model}`, toolsEnabled: true } as unknown as ResolvedModel;
      const exact = (await countPrompt(resolved, messages, [])).tokens;
      assert.ok(tokenUpperBound(messages, []) >= exact, `${model}: bound ${tokenUpperBound(messages, [])} < ${exact}`);
    }
  });
});

describe('compaction: storage and thought signatures', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('migration 11 opens a schema-10 file: compactions table, turn_items.thought_signature', () => {
    const file = path.join(dir, 'vox.db');
    const raw = new Database(file);
    for (const m of MIGRATIONS.filter((x) => x.version <= 10)) m.up(raw as never);
    raw.pragma('user_version = 10');
    raw.close();
    const s = VoxStore.open(file);
    try {
      assert.equal(LATEST_SCHEMA_VERSION >= 11, true);
      assert.deepEqual(s.compactions('nope'), []);
      const cols = (s.db.prepare('PRAGMA table_info(turn_items)').all() as { name: string }[]).map((c) => c.name);
      assert.ok(cols.includes('thought_signature'));
    } finally {
      s.close();
    }
  });

  it('a tool call\'s thought signature is stored and replayed byte for byte, compacted thread or not', () => {
    const rand = seededRandom(1411);
    const signature = `${seededBytes(rand, 333).toString('base64')}\u00e9\u4e2d\u{1F600}\u200d\u0000end`;
    const s = VoxStore.open(path.join(dir, 'vox.db'));
    try {
      s.append(
        { type: 'thread.created', threadId: 't', title: 'x' },
        { type: 'message.added', threadId: 't', messageId: 'u0', parentId: null, role: 'user', content: 'first', runId: null, status: 'complete' },
        { type: 'message.added', threadId: 't', messageId: 'a0', parentId: 'u0', role: 'assistant', content: 'answer', runId: null, status: 'complete' },
        { type: 'message.added', threadId: 't', messageId: 'u1', parentId: 'a0', role: 'user', content: 'second', runId: null, status: 'complete' },
        { type: 'run.started', threadId: 't', runId: 'r1', ordinal: 0, provider: 'openai', model: 'openai:gpt-4o', ownerPid: 1, userMessageId: 'u1' },
        { type: 'item.started', threadId: 't', runId: 'r1', itemId: 'i0', ordinal: 0, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"a"}', thoughtSignature: signature },
        { type: 'item.completed', threadId: 't', runId: 'r1', itemId: 'i0', status: 'completed', content: 'file text', isError: false },
      );
      const check = () => {
        const turn = rebuildTurn(s, 'r1');
        const call = turn.messages.find((m) => m.role === 'assistant')!;
        assert.ok(call.role === 'assistant' && call.toolCalls);
        assert.equal(call.toolCalls[0]!.thoughtSignature, signature);
        assert.ok(Buffer.from(call.toolCalls[0]!.thoughtSignature!, 'utf8').equals(Buffer.from(signature, 'utf8')));
        // And on the wire (Gemini's OpenAI-compatible shape).
        const wire = toOpenAIMessages(turn.messages) as Array<{ tool_calls?: Array<{ extra_content?: { google?: { thought_signature?: string } } }> }>;
        assert.equal(wire[0]!.tool_calls![0]!.extra_content!.google!.thought_signature, signature);
      };
      check();
      s.append({
        type: 'thread.compacted', threadId: 't', compactionId: 'cmp:1', mode: 'upTo', trigger: 'manual', fromMessageId: 'u0', upToMessageId: 'a0',
        compactMessageIndex: 1, coveredMessages: 2, summary: SUMMARY, model: 'openai:gpt-4o', usage: { inputTokens: 1, outputTokens: 1 }, supersedes: [], runId: null,
      });
      check();
      const h = buildHistory(s.activePath('t'), 'sys', () => [], s.compactions('t'));
      assert.deepEqual(h.map((m) => m.content), ['sys', summaryMessageText(SUMMARY, 2), 'second']);
      const reopened = (s.db.prepare('SELECT thought_signature AS sig FROM turn_items WHERE id = ?').get('i0') as { sig: string }).sig;
      assert.equal(reopened, signature);
    } finally {
      s.close();
    }
  });
});
