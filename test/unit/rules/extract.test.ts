/** Rules (SPEC 6.1), the pure part: @rule tokens found and stripped, merged with always and paths rules, warnings, names, globs, the block. */
import { strict as assert } from 'node:assert';
import { extractRules, findTokens, formatRulesBlock, type AttachableRule } from '../../../src/engine/rules/extract';
import { globToRegExp, matchesAny } from '../../../src/engine/rules/glob';
import { RuleError } from '../../../src/engine/rules/errors';
import { parseRuleFile, parseUserRule, validateRuleName } from '../../../src/engine/rules/parse';

const rule = (name: string, attach: 'always' | 'manual', extra: Partial<AttachableRule> = {}): AttachableRule => ({ name, attach, paths: [], body: `body of ${name}`, enabled: true, ...extra });
const RULES = [rule('style', 'manual'), rule('tests', 'manual'), rule('tone', 'always'), rule('ts-only', 'always', { attach: 'manual', paths: ['src/**/*.ts'] })];
const names = (p: string, extra: Partial<Parameters<typeof extractRules>[0]> = {}) => extractRules({ prompt: p, rules: RULES, ...extra });

describe('rules: extraction and stripping', () => {
  it('@name at the start, in the middle, at the end and before punctuation is a manual rule, stripped', () => {
    assert.equal(names('@style fix the header').prompt, 'fix the header');
    assert.equal(names('fix the header @style').prompt, 'fix the header');
    assert.equal(names('fix the header @style.').prompt, 'fix the header.');
    assert.equal(names('see @style, then fix it').prompt, 'see, then fix it');
    assert.equal(names('use (@style) here').prompt, 'use () here');
    assert.equal(names('fix @style now').prompt, 'fix now');
    assert.deepEqual(names('fix @style now').rules.map((r) => r.name), ['tone', 'style']);
    assert.deepEqual(names('fix @Style now').rules.map((r) => r.name), ['tone', 'style'], 'case-insensitive');
  });

  it('@rule:name works too, and is stripped the same way', () => {
    const x = names('@rule:tests add a case for @rule:style!');
    assert.equal(x.prompt, 'add a case for!');
    assert.deepEqual(x.rules.map((r) => r.name), ['tone', 'tests', 'style']);
    assert.deepEqual(x.warnings, []);
  });

  it('not inside a word, an e-mail address, a path or code', () => {
    for (const p of ['mail me@style.com', 'x@style', 'see `@style` in docs', 'open @style/a.ts', 'open @style.ts', '```\n@style\n```\nok', 'a@style b']) {
      const x = names(p);
      assert.equal(x.prompt, p, p);
      assert.deepEqual(x.rules.map((r) => r.name), ['tone'], p);
    }
  });

  it('always rules merge without duplicates, also when named explicitly', () => {
    const x = names('@rule:tone @style @style fix');
    assert.deepEqual(x.rules.map((r) => r.name), ['tone', 'style']);
    assert.equal(x.prompt, 'fix');
  });

  it('paths rules attach when a file in context matches', () => {
    assert.deepEqual(names('fix', { contextPaths: ['src/engine/a.ts'] }).rules.map((r) => r.name), ['tone', 'ts-only']);
    assert.deepEqual(names('fix', { contextPaths: ['README.md'] }).rules.map((r) => r.name), ['tone']);
  });

  it('a token that is neither a rule nor a known mention is a warning; known mentions and mention kinds are not', () => {
    const x = names('look at @nope and @problems and @README', { isKnownMention: (w) => w === 'README' });
    assert.deepEqual(x.warnings, ['@nope is neither a rule nor a known mention']);
    assert.equal(x.prompt, 'look at @nope and @problems and @README');
    assert.deepEqual(names('@rule:ghost hi').warnings, ['@rule:ghost: there is no rule of that name']);
  });

  it('a disabled rule is not attached and its token warns', () => {
    const x = extractRules({ prompt: '@style fix', rules: [rule('style', 'manual', { enabled: false })] });
    assert.deepEqual(x.rules, []);
    assert.deepEqual(x.warnings, ['@style: that rule is disabled']);
  });

  it('a prompt that is only rule tokens keeps its text (the block still goes)', () => {
    const x = names('@style');
    assert.equal(x.prompt, '@style');
    assert.deepEqual(x.rules.map((r) => r.name), ['tone', 'style']);
  });

  it('findTokens reports positions', () => {
    assert.deepEqual(findTokens('a @b c'), [{ start: 2, end: 4, name: 'b', explicit: false }]);
  });

  it('the block lists each rule once, escaped', () => {
    const b = formatRulesBlock([{ name: 'a', body: 'one' }, { name: 'b', body: 'two' }]);
    assert.match(b, /^<user_rules>\n/);
    assert.match(b, /<rule name="a">\none\n<\/rule>\n<rule name="b">\ntwo\n<\/rule>\n<\/user_rules>$/);
    assert.equal(formatRulesBlock([]), '');
  });
});

describe('rules: names', () => {
  it('refuses regex characters, spaces and paths with rule/invalidName', () => {
    for (const n of ['a.b', 'a*', '(x)', 'a b', 'a/b', '', 'é', 'x|y', '^a$']) {
      assert.throws(() => validateRuleName(n, '.vox/rules/x.md', 2), (e: unknown) => e instanceof RuleError && e.code === 'invalidName' && (n === '' || e.message.startsWith('.vox/rules/x.md:2:')), n);
    }
    assert.equal(validateRuleName('my_rule-2'), 'my_rule-2');
  });

  it('refuses the reserved names (mention kinds, workspace, web) with rule/reservedName', () => {
    for (const n of ['file', 'workspace', 'web', 'problems', 'git', 'selection', 'terminal', 'folder', 'thread', 'rule', 'FILE']) {
      assert.throws(() => validateRuleName(n), (e: unknown) => e instanceof RuleError && e.code === 'reservedName', n);
    }
  });
});

describe('rules: front matter', () => {
  it('reads name, attach, description, paths (list and inline) and enabled', () => {
    const r = parseRuleFile('---\nname: style\nattach: always\ndescription: "House style"\npaths:\n  - src/**/*.ts\n  - "*.md"\nenabled: false\n---\nUse tabs.\n', '.vox/rules/style.md');
    assert.deepEqual({ ...r }, { name: 'style', scope: 'workspace', attach: 'always', description: 'House style', paths: ['src/**/*.ts', '*.md'], body: 'Use tabs.', source: '.vox/rules/style.md', enabledInFile: false });
    assert.deepEqual(parseRuleFile('---\npaths: [a/*.ts, "b/**"]\n---\nx', '.vox/rules/p.md').paths, ['a/*.ts', 'b/**']);
  });

  it('without front matter: the file name, manual', () => {
    const r = parseRuleFile('Just text', '.vox/rules/plain.md');
    assert.equal(r.name, 'plain');
    assert.equal(r.attach, 'manual');
    assert.equal(r.body, 'Just text');
  });

  it('errors name the file and the line', () => {
    const cases: Array<[string, RegExp, string]> = [
      ['---\nname: a.b\n---\nx', /^\.vox\/rules\/f\.md:2: /, 'invalidName'],
      ['---\nname: web\n---\nx', /^\.vox\/rules\/f\.md:2: /, 'reservedName'],
      ['---\nattach: sometimes\n---\nx', /^\.vox\/rules\/f\.md:2: attach must be/, 'invalidRule'],
      ['---\nname: a\ncolour: red\n---\nx', /^\.vox\/rules\/f\.md:3: unknown key "colour"/, 'invalidRule'],
      ['---\nname: a\n', /^\.vox\/rules\/f\.md:1: .*never closed/, 'invalidRule'],
      ['---\nname a\n---\n', /^\.vox\/rules\/f\.md:2: not a "key: value" line/, 'invalidRule'],
      ['---\nname: a\nname: b\n---\n', /^\.vox\/rules\/f\.md:3: "name" given twice/, 'invalidRule'],
      ['---\nenabled: maybe\n---\n', /^\.vox\/rules\/f\.md:2: enabled must be/, 'invalidRule'],
    ];
    for (const [text, re, code] of cases) {
      assert.throws(() => parseRuleFile(text, '.vox/rules/f.md'), (e: unknown) => e instanceof RuleError && e.code === code && re.test(e.message), text);
    }
  });

  it('user rules from the setting are validated by index', () => {
    assert.equal(parseUserRule({ name: 'a', attach: 'always', body: 'b' }, 0).attach, 'always');
    assert.throws(() => parseUserRule({ name: 'file', body: 'x' }, 3), (e: unknown) => e instanceof RuleError && e.code === 'reservedName' && e.message.includes('[3]'));
    assert.throws(() => parseUserRule({ name: 'ok', attach: 'never', body: 'x' }, 1), (e: unknown) => e instanceof RuleError && e.code === 'invalidRule');
    assert.throws(() => parseUserRule('x', 0), RuleError);
  });
});

describe('rules: paths globs', () => {
  it('*, **, ?, {a,b}, classes; a glob without / matches the name at any depth', () => {
    assert.ok(matchesAny(['src/**/*.ts'], 'src/a.ts'));
    assert.ok(matchesAny(['src/**/*.ts'], 'src/x/y/a.ts'));
    assert.ok(!matchesAny(['src/**/*.ts'], 'test/a.ts'));
    assert.ok(matchesAny(['*.md'], 'docs/deep/README.md'));
    assert.ok(!matchesAny(['src/*.ts'], 'src/x/a.ts'));
    assert.ok(matchesAny(['src/*.{ts,tsx}'], 'src/a.tsx'));
    assert.ok(matchesAny(['a?.js'], 'a1.js'));
    assert.ok(!matchesAny(['a?.js'], 'a12.js'));
    assert.ok(matchesAny(['[abc].txt'], 'b.txt'));
    assert.ok(matchesAny(['./src/**'], 'src/a/b'));
    assert.ok(matchesAny(['src/**'], 'src'), 'a folder mention of the glob\'s root');
    assert.ok(!matchesAny(['a.b'], 'aXb'), 'a dot is literal');
    assert.equal(globToRegExp('x(y)+').test('x(y)+'), true, 'regex characters are literal');
  });
});
