/**
 * The local provider's tool protocol without a model: grammar schema reduction, live decoding of
 * a streamed message text, reply parsing/validation and the history mapping.
 */
import * as assert from 'node:assert/strict';
import {
  MessageTextStreamer,
  parseToolReply,
  toChatHistory,
  toGrammarSchema,
  toolResponseSchema,
} from '../../src/engine/providers/local-llama-tools';
import type { ToolSpec } from '../../src/engine/providers/types';

const readFile: ToolSpec = {
  name: 'read_file',
  description: 'Read a file.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, limit: { type: 'integer' } },
    required: ['path'],
  },
};

describe('local tool protocol', function () {
  describe('toGrammarSchema', function () {
    it('keeps only required properties and caps strings and arrays', function () {
      assert.deepEqual(toGrammarSchema(readFile.parameters), { type: 'object', properties: { path: { type: 'string' } } });
      assert.deepEqual(toGrammarSchema(readFile.parameters, 10), {
        type: 'object',
        properties: { path: { type: 'string', maxLength: 10 } },
      });
      assert.deepEqual(toGrammarSchema({ type: 'array', items: { type: 'string', maxLength: 50 }, maxItems: 3 }, 10), {
        type: 'array',
        items: { type: 'string', maxLength: 10 },
        maxItems: 3,
      });
    });

    it('maps enums, unions, type lists and free-form objects', function () {
      assert.deepEqual(toGrammarSchema({ type: 'string', enum: ['a', 'b'] }), { enum: ['a', 'b'] });
      assert.deepEqual(toGrammarSchema({ anyOf: [{ type: 'string' }, { type: 'null' }] }), {
        oneOf: [{ type: 'string' }, { type: 'null' }],
      });
      assert.deepEqual(toGrammarSchema({ type: ['integer', 'null'] }), { oneOf: [{ type: 'integer' }, { type: 'null' }] });
      assert.deepEqual(toGrammarSchema({ type: 'object' }), { type: 'object', additionalProperties: true });
      assert.deepEqual(toGrammarSchema({ type: 'object' }, 5), { type: 'object', properties: {} });
      assert.deepEqual(toGrammarSchema({ description: 'anything' }), { type: ['string', 'number', 'integer', 'boolean', 'null'] });
    });

    it('builds a reply schema with one branch per tool', function () {
      const s = toolResponseSchema([readFile], 48) as { oneOf: Array<{ properties: Record<string, unknown> }> };
      assert.equal(s.oneOf.length, 2);
      assert.deepEqual(s.oneOf[0]!.properties.text, { type: 'string', maxLength: 48 });
      assert.deepEqual(s.oneOf[1]!.properties.name, { const: 'read_file' });
      assert.deepEqual(s.oneOf[1]!.properties.arguments, { type: 'object', properties: { path: { type: 'string', maxLength: 48 } } });
    });
  });

  describe('MessageTextStreamer', function () {
    it('decodes escapes split across chunks without emitting half characters', function () {
      const text = 'line 1\nsaid "hi" \\ é 😀 done';
      const raw = `{ "type": "message", "text": ${JSON.stringify(text).replace('😀', '\\ud83d\\ude00')} }`;
      const s = new MessageTextStreamer();
      const deltas: string[] = [];
      for (const ch of raw) {
        const d = s.push(ch);
        if (d) deltas.push(d);
      }
      assert.equal(deltas.join(''), text);
      assert.equal(s.text, text);
      for (const d of deltas) assert.ok(!/[\ud800-\udbff]$/.test(d), `delta ends in a lone high surrogate: ${JSON.stringify(d)}`);
    });

    it('emits nothing for a tool call', function () {
      const s = new MessageTextStreamer();
      assert.equal(s.push('{"type":"tool_call","name":"read_file","arguments":{"path":"a"}}'), '');
    });
  });

  describe('parseToolReply', function () {
    it('accepts messages and valid tool calls', function () {
      assert.deepEqual(parseToolReply('{"type":"message","text":"hi"}', [readFile]), { kind: 'message', text: 'hi' });
      assert.deepEqual(parseToolReply('{ "type": "tool_call", "name": "read_file", "arguments": { "path": "a.ts" } }', [readFile]), {
        kind: 'toolCall',
        name: 'read_file',
        argumentsJson: '{"path":"a.ts"}',
      });
    });

    it('rejects unknown tools, missing required arguments and broken JSON', function () {
      assert.throws(() => parseToolReply('{"type":"tool_call","name":"rm","arguments":{}}', [readFile]), /unknown tool/);
      assert.throws(() => parseToolReply('{"type":"tool_call","name":"read_file","arguments":{}}', [readFile]), /path/);
      assert.throws(() => parseToolReply('{"type":"tool_call","name":"read_file","arguments":[]}', [readFile]), /not an object/);
      assert.throws(() => parseToolReply('{"type":"message","text":"unfinished', [readFile]), SyntaxError);
    });
  });

  describe('toChatHistory', function () {
    it('maps plain chats and ends with an empty model turn', function () {
      assert.deepEqual(toChatHistory([{ role: 'user', content: 'hi' }], undefined), [
        { type: 'user', text: 'hi' },
        { type: 'model', response: [] },
      ]);
    });

    it('teaches the protocol and replays tool turns in it', function () {
      const h = toChatHistory(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'show a.ts' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', argumentsJson: '{"path":"a.ts"}' }] },
          { role: 'tool', toolCallId: 'c1', name: 'read_file', content: 'export {}', isError: false },
          { role: 'assistant', content: 'It is empty.' },
        ],
        [readFile],
      );
      assert.equal(h.length, 6);
      const system = h[0]!;
      assert.ok(system.type === 'system' && typeof system.text === 'string');
      assert.match(system.text as string, /^Be brief\.\n\n/);
      assert.match(system.text as string, /read_file: Read a file\./);
      assert.deepEqual(h[2], { type: 'model', response: ['{"type":"tool_call","name":"read_file","arguments":{"path":"a.ts"}}'] });
      assert.deepEqual(h[3], { type: 'user', text: 'Result of tool call read_file (c1):\nexport {}' });
      assert.deepEqual(h[4], { type: 'model', response: ['{"type":"message","text":"It is empty."}'] });
      assert.deepEqual(h[5], { type: 'model', response: [] });
    });
  });
});
