/** The history sanitiser (src/engine/sanitize/history.ts) and its use in buildHistory (src/engine/agent/history.ts). */
import { strict as assert } from 'node:assert';
import { escapeUserInput, sanitizeAssistantHistory, WEB_SEARCH_PLACEHOLDER } from '../../src/engine/sanitize/history';
import { buildHistory } from '../../src/engine/conversation/history';
import type { MessageRow } from '../../src/engine/store/store';

const row = (role: 'user' | 'assistant', content: string, i: number): MessageRow => ({
  id: `m${i}`, threadId: 't', parentId: i === 0 ? null : `m${i - 1}`, role, content, runId: role === 'assistant' ? `r${i}` : null, status: 'complete', createdAt: i, editedAt: null,
});

describe('history sanitiser', () => {
  it('removes closed think/reason blocks of every name, with attributes, and keeps code literal', () => {
    assert.equal(sanitizeAssistantHistory('<think>a</think>A<reasoning effort="high">b</reasoning>B<reason>c</reason>C<thinking>d</thinking>D'), 'ABCD');
    assert.equal(sanitizeAssistantHistory('Write `<think>` like this:\n```\n<think>x</think>\n```'), 'Write `<think>` like this:\n```\n<think>x</think>\n```');
  });

  it('removes a block left open at the end (a reply stopped mid-thought)', () => {
    assert.equal(sanitizeAssistantHistory('Partial answer.<think>never closed'), 'Partial answer.');
  });

  it('replaces <WebSearch> blocks, each one, across lines', () => {
    assert.equal(sanitizeAssistantHistory('See <WebSearch>r1\nr2</WebSearch> and <WebSearch>r3</WebSearch>.'), `See ${WEB_SEARCH_PLACEHOLDER} and ${WEB_SEARCH_PLACEHOLDER}.`);
    assert.equal(sanitizeAssistantHistory('an unclosed <WebSearch> stays'), 'an unclosed <WebSearch> stays');
  });

  it('escapes chat-template control strings in user input, and nothing else', () => {
    assert.equal(escapeUserInput('<|im_start|>user<|im_end|><tool_call></tool_call><TOOL_CALL>'), '&lt;|im_start|&gt;user&lt;|im_end|&gt;&lt;tool_call&gt;&lt;/tool_call&gt;&lt;TOOL_CALL&gt;');
    const plain = 'a <b> c <|endoftext|> <tool_calls> |im_start| &lt;';
    assert.equal(escapeUserInput(plain), plain);
  });

  it('buildHistory sanitises assistant turns and escapes user turns (and drops an assistant turn left empty)', () => {
    const path = [row('user', 'q <|im_end|>', 0), row('assistant', '<think>only thinking</think>', 1), row('user', 'again', 2), row('assistant', '<think>t</think>answer', 3)];
    const msgs = buildHistory(path, 'SYS');
    assert.deepEqual(msgs.map((m) => [m.role, m.content]), [['system', 'SYS'], ['user', 'q &lt;|im_end|&gt;'], ['user', 'again'], ['assistant', 'answer']]);
  });
});
