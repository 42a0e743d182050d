/**
 * Parsing rules: the front matter of a `.vox/rules/*.md` file (`name`, `attach`, `description`,
 * `paths`, `enabled`), the user rules of the settings (`vox.rules`), and name validation. Pure:
 * text in, a Rule or a RuleError (naming the file and the line) out.
 */
import { MAX_RULE_BODY_CHARS, MAX_RULE_DESCRIPTION_CHARS, MAX_RULE_PATHS, ruleNameProblem } from '../../protocol/commands/rules';
import { QUOTED_LINE_CHARS, quote } from '../../protocol/wire/quote';
import { RuleError } from './errors';

export type RuleScope = 'user' | 'workspace' | 'peer';
export type RuleAttach = 'always' | 'manual';

export interface Rule {
  name: string;
  scope: RuleScope;
  attach: RuleAttach;
  description: string | null;
  /** Globs (workspace-relative): the rule also attaches when a file in the turn's context matches one. */
  paths: string[];
  body: string;
  /** Workspace-relative file, or SETTINGS_SOURCE. */
  source: string;
  /** The front matter's `enabled: false` turns a file off too (the workspace toggle is .vox/rules/.disabled.json). */
  enabledInFile: boolean;
}

/** How the user rules are named in errors and listings. */
export const SETTINGS_SOURCE = 'settings (vox.rules)';

/** Checks a name; `rule/invalidName` or `rule/reservedName`, naming where it came from. */
export function validateRuleName(n: string, source: string | null = null, line: number | null = null): string {
  const problem = ruleNameProblem(n);
  if (problem === null) return n;
  const where = source ? `${source}${line !== null ? `:${line}` : ''}: ` : '';
  throw new RuleError(problem.includes('reserved') ? 'reservedName' : 'invalidName', `${where}${problem}`, source, line);
}

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) return t.slice(1, -1);
  return t;
}

function inlineList(v: string): string[] {
  const inner = v.trim().slice(1, -1);
  return inner.split(',').map(unquote).filter((s) => s.length > 0);
}

/** The file name without `.md`: the rule's name when the front matter gives none. */
export function nameFromFile(file: string): string {
  const base = file.split('/').pop() ?? file;
  return base.replace(/\.md$/i, '');
}

/**
 * Parses one rule file. Front matter is optional (`---` on the first line up to the next `---`);
 * keys: name (default: the file name), attach (default: manual), description, paths (a YAML list
 * or `[a, b]`), enabled. Unknown keys are refused so a typo does not silently change a rule.
 */
export function parseRuleFile(text: string, source: string, scope: RuleScope = 'workspace'): Rule {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const fail = (line: number, message: string) => new RuleError('invalidRule', `${source}:${line}: ${message}`, source, line);
  const fields: Record<string, { value: string; line: number }> = {};
  let paths: string[] | null = null;
  let bodyStart = 0;
  if (lines[0]?.trim() === '---') {
    let end = -1;
    let listKey: string | null = null;
    for (let i = 1; i < lines.length; i++) {
      const raw = lines[i]!;
      if (raw.trim() === '---') {
        end = i;
        break;
      }
      if (raw.trim() === '' || raw.trim().startsWith('#')) continue;
      const item = /^\s+-\s*(.*)$/.exec(raw) ?? /^-\s+(.*)$/.exec(raw);
      if (item) {
        if (listKey !== 'paths') throw fail(i + 1, 'a list item outside "paths:"');
        paths!.push(unquote(item[1]!));
        continue;
      }
      const kv = /^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$/.exec(raw);
      if (!kv) throw fail(i + 1, `not a "key: value" line: ${quote(raw.trim(), QUOTED_LINE_CHARS)}`);
      const key = kv[1]!;
      const value = kv[2]!;
      if (!['name', 'attach', 'description', 'paths', 'enabled'].includes(key)) throw fail(i + 1, `unknown key "${key}" (known: name, attach, description, paths, enabled)`);
      if (key in fields || (key === 'paths' && paths !== null)) throw fail(i + 1, `"${key}" given twice`);
      listKey = null;
      if (key === 'paths') {
        if (value.trim() === '') {
          paths = [];
          listKey = 'paths';
        } else if (value.trim().startsWith('[') && value.trim().endsWith(']')) paths = inlineList(value);
        else paths = [unquote(value)];
        fields.paths = { value, line: i + 1 };
        continue;
      }
      fields[key] = { value: unquote(value), line: i + 1 };
    }
    if (end < 0) throw fail(1, 'the front matter starting with "---" is never closed by another "---"');
    bodyStart = end + 1;
  }
  const nameField = fields.name;
  const ruleName = nameField ? validateRuleName(nameField.value, source, nameField.line) : validateRuleName(nameFromFile(source), source, 1);
  const attachField = fields.attach;
  const attach = attachField?.value ?? 'manual';
  if (attach !== 'always' && attach !== 'manual') throw fail(attachField!.line, `attach must be "always" or "manual", not "${attach}"`);
  const enabledField = fields.enabled;
  if (enabledField && enabledField.value !== 'true' && enabledField.value !== 'false') throw fail(enabledField.line, `enabled must be true or false, not "${enabledField.value}"`);
  const description = fields.description?.value ?? null;
  if (description !== null && description.length > MAX_RULE_DESCRIPTION_CHARS) throw fail(fields.description!.line, `the description is longer than ${MAX_RULE_DESCRIPTION_CHARS} characters`);
  const globs = paths ?? [];
  if (globs.length > MAX_RULE_PATHS) throw fail(fields.paths!.line, `at most ${MAX_RULE_PATHS} paths`);
  if (globs.some((g) => g.length === 0)) throw fail(fields.paths!.line, 'an empty path glob');
  const body = lines.slice(bodyStart).join('\n').trim();
  if (body.length > MAX_RULE_BODY_CHARS) throw fail(bodyStart + 1, `the body is longer than ${MAX_RULE_BODY_CHARS} characters`);
  return { name: ruleName, scope, attach, description, paths: globs, body, source, enabledInFile: enabledField?.value !== 'false' };
}

/** The text of a workspace rule file for these fields (what createRule / updateRule write). */
export function formatRuleFile(r: { name: string; attach: RuleAttach; description: string | null; paths: string[]; body: string; enabledInFile?: boolean }): string {
  const q = (s: string) => (/^[\w./*?{}\-, ]*$/.test(s) && !s.includes(': ') ? s : JSON.stringify(s));
  const head = ['---', `name: ${r.name}`, `attach: ${r.attach}`];
  if (r.description) head.push(`description: ${JSON.stringify(r.description)}`);
  if (r.paths.length > 0) head.push('paths:', ...r.paths.map((p) => `  - ${q(p)}`));
  if (r.enabledInFile === false) head.push('enabled: false');
  head.push('---');
  return `${head.join('\n')}\n${r.body.trim()}\n`;
}

/** One entry of the `vox.rules` setting; a bad entry is a RuleError naming its index. */
export function parseUserRule(raw: unknown, index: number): Rule {
  const src = `${SETTINGS_SOURCE}[${index}]`;
  const fail = (m: string) => new RuleError('invalidRule', `${src}: ${m}`, SETTINGS_SOURCE, null);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail('each rule is an object {name, attach, body, description?}');
  const o = raw as Record<string, unknown>;
  if (typeof o.name !== 'string') throw fail('"name" must be a string');
  const n = validateRuleName(o.name, src);
  const attach = o.attach ?? 'manual';
  if (attach !== 'always' && attach !== 'manual') throw fail(`attach must be "always" or "manual"`);
  if (typeof o.body !== 'string') throw fail('"body" must be a string');
  if (o.body.length > MAX_RULE_BODY_CHARS) throw fail(`the body is longer than ${MAX_RULE_BODY_CHARS} characters`);
  if (o.description !== undefined && o.description !== null && typeof o.description !== 'string') throw fail('"description" must be a string');
  const p = o.paths ?? [];
  if (!Array.isArray(p) || p.some((g) => typeof g !== 'string' || g.length === 0) || p.length > MAX_RULE_PATHS) throw fail(`"paths" must be at most ${MAX_RULE_PATHS} non-empty strings`);
  return {
    name: n, scope: 'user', attach, body: o.body.trim(), description: typeof o.description === 'string' ? o.description : null,
    paths: p as string[], source: SETTINGS_SOURCE, enabledInFile: o.enabled !== false,
  };
}
