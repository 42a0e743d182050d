/**
 * salvageToolCalls (SPEC 3.2): fenced ```tool:<name> blocks and bare JSON envelopes become calls;
 * malformed ones become problems (never dropped); JSON that is not an envelope stays text; the
 * displayed text loses exactly the well-formed calls.
 */
import { strict as assert } from 'node:assert';
import { MAX_SALVAGED_CALLS, parseLenientJson, salvageToolCalls } from '../../../src/engine/salvage/fenced-calls';

const TOOLS = ['read_file', 'write_file', 'list_files', 'run_command'];
const fence = (head: string, body = '') => `\`\`\`tool:${head}\n${body}${body ? '\n' : ''}\`\`\``;
const args = (json: string) => JSON.parse(json) as unknown;

describe('salvageToolCalls', () => {
  it('takes several fenced blocks of one reply, in order, with header pairs and JSON bodies merged', () => {
    const text = [
      'I will look first.',
      fence('read_file path=src/a.ts'),
      fence('list_files', '{"path": "src", "depth": 2}'),
      fence('run_command command="npm test" timeout=30 background=false'),
      fence('read_file path=b.txt', '{"offset": 10}'),
    ].join('\n');
    const r = salvageToolCalls(text, TOOLS);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.calls.map((c) => [c.name, args(c.argumentsJson), c.source]), [
      ['read_file', { path: 'src/a.ts' }, 'fence'],
      ['list_files', { path: 'src', depth: 2 }, 'fence'],
      ['run_command', { command: 'npm test', timeout: 30, background: false }, 'fence'],
      ['read_file', { path: 'b.txt', offset: 10 }, 'fence'],
    ]);
    assert.equal(r.displayText, 'I will look first.');
  });

  it('a ``` inside a JSON string does not close the block (escaped or raw newlines)', () => {
    const escaped = fence('write_file', JSON.stringify({ path: 'README.md', content: '# T\n```js\nx()\n```\n' }));
    const raw = fence('write_file', '{"path": "b.md", "content": "one\n```\ncode\n```\ntwo"}');
    const r = salvageToolCalls(`${escaped}\nthen\n${raw}\nend`, TOOLS);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(args(r.calls[0]!.argumentsJson), { path: 'README.md', content: '# T\n```js\nx()\n```\n' });
    assert.deepEqual(args(r.calls[1]!.argumentsJson), { path: 'b.md', content: 'one\n```\ncode\n```\ntwo' });
    assert.equal(r.displayText, 'then\n\nend');
  });

  it('nested JSON arguments survive as they were written', () => {
    const body = { path: 'cfg.json', content: JSON.stringify({ a: [1, { b: '}' }], c: '"{"' }) };
    const r = salvageToolCalls(fence('write_file', JSON.stringify(body, null, 2)), TOOLS);
    assert.deepEqual(args(r.calls[0]!.argumentsJson), body);
  });

  it('a longer fence needs a closing fence as long', () => {
    const text = '````tool:write_file\n{"path": "x", "content": "a"}\n```\n````';
    const r = salvageToolCalls(text, TOOLS);
    assert.equal(r.calls.length, 0);
    assert.equal(r.problems[0]!.code, 'badJson', 'the inner ``` is body, not the end');
    const ok = salvageToolCalls('````tool:read_file path=a\n````', TOOLS);
    assert.equal(ok.calls.length, 1);
  });

  it('reports malformed blocks, each with its reason, and keeps them in the displayed text', () => {
    const blocks = [
      fence('read_file', '{"path": "a.txt",}'),
      fence('read_file', '["a.txt"]'),
      fence('teleport', '{"to": "mars"}'),
      fence('read_file path=a.txt', '{"path": "b.txt"}'),
      fence(''),
      fence('read_file path=a b=', ''),
      fence('read_file', '{"path": "never closed}'),
    ];
    const r = salvageToolCalls(blocks.join('\n'), TOOLS);
    assert.equal(r.calls.length, 0);
    assert.deepEqual(r.problems.map((p) => p.code), ['badJson', 'notAnObject', 'unknownTool', 'conflict', 'noName', 'badHeader', 'badJson']);
    assert.match(r.problems[2]!.message, /no tool named "teleport".*read_file, write_file, list_files, run_command/);
    assert.match(r.problems[3]!.message, /"path" is given both/);
    assert.match(r.problems[6]!.message, /string is not closed/);
    assert.equal(r.problems[0]!.label, '```tool:read_file');
    assert.equal(r.displayText, blocks.join('\n'), 'nothing is hidden when nothing ran');
  });

  it('an unclosed block is reported, not run', () => {
    const r = salvageToolCalls('Reading:\n```tool:read_file path=a.txt\n', TOOLS);
    assert.deepEqual(r.calls, []);
    assert.equal(r.problems[0]!.code, 'unclosed');
  });

  it('the same key on the fence line and in the body with the same value is no conflict', () => {
    const r = salvageToolCalls(fence('read_file path=a.txt', '{"path": "a.txt"}'), TOOLS);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(args(r.calls[0]!.argumentsJson), { path: 'a.txt' });
  });

  it('takes bare JSON envelopes on lines of their own, in every accepted shape', () => {
    const text = [
      'First:',
      '{"name": "read_file", "arguments": {"path": "a.txt"}}',
      '{"tool": "list_files", "args": {"path": "."}}',
      '{"type": "tool_call", "name": "read_file", "arguments": {"path": "b.txt"}}',
      '{"name": "read_file", "arguments": "{\\"path\\": \\"c.txt\\"}"}',
      '  {"tool": "read_file",',
      '   "input": {"path": "d.txt"}}',
      '```json',
      '{"name": "read_file", "parameters": {"path": "e.txt"}}',
      '```',
      'Done.',
    ].join('\n');
    const r = salvageToolCalls(text, TOOLS);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.calls.map((c) => [c.name, (args(c.argumentsJson) as { path: string }).path, c.source]), [
      ['read_file', 'a.txt', 'json'], ['list_files', '.', 'json'], ['read_file', 'b.txt', 'json'],
      ['read_file', 'c.txt', 'json'], ['read_file', 'd.txt', 'json'], ['read_file', 'e.txt', 'json'],
    ]);
    assert.equal(r.displayText, 'First:\n\nDone.');
  });

  it('text that merely contains JSON is not salvaged', () => {
    const texts = [
      'Your package.json should read:\n{"name": "vox", "version": "1.0.0"}',
      '{"name": "read_file", "arguments": {"path": "a"}, "extra": 1}',
      'Call it like {"name": "read_file", "arguments": {"path": "a"}} in the API.',
      '{"name": "read_file", "arguments": {"path": "a"}} and more on this line',
      '```ts\n{"name": "read_file", "arguments": {"path": "a"}}\n```',
      '```json\n{"name": "read_file", "arguments": {"path": "a"}}\n{"second": true}\n```',
      '[{"name": "read_file", "arguments": {"path": "a"}}]',
      '{"name": "read_file", "arguments": [1, 2]}',
      '{"type": "message", "name": "read_file", "arguments": {}}',
      '{"name": "read file", "arguments": {}}',
      'A fence mention: ```tool:read_file``` inline is prose.',
    ];
    for (const t of texts) {
      const r = salvageToolCalls(t, TOOLS);
      assert.deepEqual([r.calls, r.problems, r.displayText], [[], [], t], t);
    }
  });

  it('a bare envelope naming an unknown tool is reported with the active tools', () => {
    const r = salvageToolCalls('{"name": "teleport", "arguments": {"to": "mars"}}', TOOLS);
    assert.equal(r.calls.length, 0);
    assert.equal(r.problems[0]!.code, 'unknownTool');
    assert.equal(r.problems[0]!.source, 'json');
    assert.match(r.problems[0]!.message, /read_file, write_file/);
  });

  it(`takes at most ${MAX_SALVAGED_CALLS} calls from one reply and reports the rest`, () => {
    const text = Array.from({ length: MAX_SALVAGED_CALLS + 2 }, (_, i) => fence(`read_file path=f${i}`)).join('\n');
    const r = salvageToolCalls(text, TOOLS);
    assert.equal(r.calls.length, MAX_SALVAGED_CALLS);
    assert.deepEqual(r.problems.map((p) => p.code), ['tooMany', 'tooMany']);
  });

  it('text with no blocks comes back unchanged', () => {
    const t = 'Just an answer.\n\n```js\nconsole.log(1)\n```\n';
    assert.deepEqual(salvageToolCalls(t, TOOLS), { calls: [], problems: [], displayText: t });
  });
});

describe('parseLenientJson', () => {
  it('escapes raw control characters inside strings only', () => {
    assert.deepEqual(parseLenientJson('{"a": "x\ny\tz"}'), { a: 'x\ny\tz' });
    assert.deepEqual(parseLenientJson('{\n  "a": 1\n}'), { a: 1 });
    assert.throws(() => parseLenientJson('{"a": 1,}'), SyntaxError);
  });
});
