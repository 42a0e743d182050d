/**
 * Code blocks (webview/src/lib/code/): the SPEC §5.4 schedule (none over 20,000 chars, deferred
 * 300 ms over 2,000, at most one pass per STREAMING_HIGHLIGHT_INTERVAL_MS while streaming), fence
 * languages and aliases, VS Code's theme kinds, the file a block names, the buttons' messages, and
 * real shiki (JavaScript regex engine, VS Code's grammars and Dark+/Light+ themes) loading only
 * the grammars asked for.
 */
import { strict as assert } from 'node:assert';
import {
  HIGHLIGHT_DEFER_MS, HIGHLIGHT_DEFER_OVER_CHARS, HIGHLIGHT_MAX_CHARS, STREAMING_HIGHLIGHT_INTERVAL_MS,
  grammarFor, highlightCode, loadedGrammars, namedPath, planHighlight, themeKindOf,
} from '../../webview/src/lib/code/highlight';
import { codeActionFor } from '../../webview/src/lib/code/code-actions';
import { codeActionMessage } from '../../src/protocol/host';

const classes = (...c: string[]) => ({ contains: (x: string) => c.includes(x) });

describe('code blocks: highlighting schedule, languages, themes, named files, actions', function () {
  this.timeout(60_000);

  it('keeps the SPEC thresholds: none over 20,000 chars, deferred 300 ms over 2,000, throttled while streaming', () => {
    assert.equal(HIGHLIGHT_MAX_CHARS, 20_000);
    assert.equal(HIGHLIGHT_DEFER_OVER_CHARS, 2_000);
    assert.equal(HIGHLIGHT_DEFER_MS, 300);
    assert.deepEqual(planHighlight(20_001, null, 0), { kind: 'plain' });
    assert.deepEqual(planHighlight(20_001, 5, 10_000), { kind: 'plain' }, 'a block that grew past the limit stops being highlighted');
    assert.deepEqual(planHighlight(20_000, null, 0), { kind: 'after', ms: 300 });
    assert.deepEqual(planHighlight(2_001, null, 0), { kind: 'after', ms: 300 });
    assert.deepEqual(planHighlight(2_000, null, 0), { kind: 'now' });
    assert.deepEqual(planHighlight(10, 1_000, 1_000 + STREAMING_HIGHLIGHT_INTERVAL_MS - 100), { kind: 'after', ms: 100 });
    assert.deepEqual(planHighlight(10, 1_000, 1_000 + STREAMING_HIGHLIGHT_INTERVAL_MS), { kind: 'now' });
  });

  it('maps fence languages and aliases to grammars; unknown ones stay plain', () => {
    assert.equal(grammarFor('ts'), 'typescript');
    assert.equal(grammarFor('TypeScript'), 'typescript');
    assert.equal(grammarFor('py'), 'python');
    assert.equal(grammarFor('bash'), 'shellscript');
    assert.equal(grammarFor('c++'), 'cpp');
    assert.equal(grammarFor('Dockerfile'), 'docker');
    assert.equal(grammarFor(''), null);
    assert.equal(grammarFor('brainfudge'), null);
    assert.equal(grammarFor('__proto__'), null);
  });

  it('picks the theme from VS Code\'s body class', () => {
    assert.equal(themeKindOf(classes('vscode-dark')), 'dark');
    assert.equal(themeKindOf(classes('vscode-light')), 'light');
    assert.equal(themeKindOf(classes('vscode-high-contrast')), 'hcDark');
    assert.equal(themeKindOf(classes('vscode-high-contrast-light', 'vscode-high-contrast')), 'hcLight');
    assert.equal(themeKindOf(classes()), 'dark');
  });

  it('finds the file a block names: fence info after the language, or a path: comment on the first line', () => {
    assert.equal(namedPath('ts src/app.ts', 'x'), 'src/app.ts');
    assert.equal(namedPath('python title=tools/run.py', 'x'), 'tools/run.py');
    assert.equal(namedPath('ts', '// path: src/util/strings.ts\nexport {}'), 'src/util/strings.ts');
    assert.equal(namedPath('py', '# file: scripts/go.py\nprint(1)'), 'scripts/go.py');
    assert.equal(namedPath('html', '<!-- path: web/index.html -->\n<p>'), 'web/index.html');
    assert.equal(namedPath('ts', 'const path = 1;'), null);
    assert.equal(namedPath('ts {1,3}', 'x'), null, 'line highlights are not a path');
    assert.equal(namedPath('text hello world', 'x'), null);
  });

  it('the buttons\' messages: Insert carries the code; Apply the named path, without the path: marker line; each decodes as the host does', () => {
    const ins = codeActionFor('insertAtCursor', 'let a = 1;', 'ts', 'ts');
    assert.deepEqual(ins, { type: 'codeAction', action: 'insertAtCursor', code: 'let a = 1;', lang: 'ts' });
    const byFence = codeActionFor('applyToFile', 'export const a = 1;\n', 'ts src/a.ts', 'ts');
    assert.deepEqual(byFence, { type: 'codeAction', action: 'applyToFile', code: 'export const a = 1;\n', path: 'src/a.ts', lang: 'ts' });
    const byComment = codeActionFor('applyToFile', '// path: src/b.ts\nexport const b = 2;\n', 'ts', 'ts');
    assert.deepEqual(byComment, { type: 'codeAction', action: 'applyToFile', code: 'export const b = 2;\n', path: 'src/b.ts', lang: 'ts' });
    const unnamed = codeActionFor('applyToFile', 'x = 1', 'py', 'py');
    assert.equal(unnamed.path, undefined, 'no path: the host asks with a quick pick');
    for (const m of [ins, byFence, byComment, unnamed]) assert.deepEqual(codeActionMessage(m), m);
    assert.throws(() => codeActionMessage({ type: 'codeAction', action: 'format', code: '' }));
  });

  it('real shiki: VS Code\'s grammar and theme colour the tokens; only the grammars asked for are loaded', async () => {
    assert.deepEqual(await loadedGrammars(), [], 'nothing before the first block');
    const dark = await highlightCode('const answer: number = 42; // why\n', 'ts', 'dark');
    assert.ok(dark);
    const flat = dark.flat();
    assert.equal(flat.map((t) => t.text).join(''), 'const answer: number = 42; // why');
    const color = (text: string) => flat.find((t) => t.text.trim() === text)?.color?.toUpperCase();
    assert.equal(color('const'), '#569CD6', 'Dark+ keyword blue');
    assert.equal(color('42'), '#B5CEA8', 'Dark+ number green');
    const light = (await highlightCode('const answer = 42;', 'typescript', 'light'))!.flat();
    assert.equal(light.find((t) => t.text.trim() === 'const')?.color?.toUpperCase(), '#0000FF', 'Light+ keyword blue');
    assert.equal(await highlightCode('?', 'brainfudge', 'dark'), null);
    // A line past TOKENIZE_MAX_LINE_CHARS (minified code) stays one plain token; the next line is coloured.
    const long = (await highlightCode(`const a = [${'1,'.repeat(2_100)}];\nconst b = 2;`, 'ts', 'dark'))!;
    assert.equal(long[0]!.length, 1, 'the long line is not tokenized');
    assert.equal(long[1]!.find((t) => t.text.trim() === 'const')?.color?.toUpperCase(), '#569CD6');
    const py = (await highlightCode('def f():\n    return "x"\n', 'py', 'hcDark'))!;
    assert.equal(py.length, 3);
    const loaded = await loadedGrammars();
    assert.ok(loaded.includes('typescript') && loaded.includes('python'), loaded.join(','));
    for (const other of ['rust', 'cpp', 'java', 'go', 'php']) assert.ok(!loaded.includes(other), `${other} was not loaded`);
  });
});
