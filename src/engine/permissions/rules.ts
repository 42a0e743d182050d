/**
 * Permission rules and modes as data: the three modes (ask every time, auto-approve edits, full
 * auto), the rule shape `{action, tool?, command?, path?, reason?}`, and their validation from a
 * settings value (`vox.permissions`) or the text of the workspace's `.vox/permissions.json` —
 * every malformed entry is a `PermissionRulesError` naming the file, the JSON path and why.
 * Matching and precedence live in ./decide.ts.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { parseCommandLine, type SimpleCommand } from './shell-parse';

export const PERMISSION_MODES = ['ask', 'autoEdits', 'fullAuto'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const RULE_ACTIONS = ['allow', 'ask', 'deny'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** The workspace rule file, relative to the workspace root. */
export const WORKSPACE_RULES_FILE = '.vox/permissions.json';
/** Most rules one source may hold. */
export const MAX_RULES_PER_SOURCE = 500;
/** Longest command pattern, path glob or reason of a rule. */
export const MAX_RULE_FIELD_CHARS = 1_000;
/** Largest rule file read (bytes). */
export const MAX_RULES_FILE_BYTES = 256 * 1024;

export type PermissionErrorCode = Extract<ErrorCode<'permission'>, 'invalidRules' | 'unreadableRules' | 'invalidMode'>;

/** A rule source that cannot be used: `source` names the file or setting, `jsonPath` the entry (e.g. `$.rules[2].action`). */
export class PermissionRulesError extends VoxError<'permission'> {
  override readonly name = 'PermissionRulesError';
  readonly domain = 'permission' as const;
  constructor(
    code: PermissionErrorCode,
    readonly source: string,
    readonly jsonPath: string,
    readonly reason: string,
  ) {
    super(code, `${source}: ${jsonPath}: ${reason}`);
  }
}

/** A validated rule. `tool` is a tool name, a class (read/write/execute), `*`, or `mcp__<server>__*` (every tool of one MCP server). */
export interface PermissionRule {
  action: RuleAction;
  tool: string;
  /** A command pattern (./decide.ts), parsed into its sub-commands. */
  command: { text: string; pattern: SimpleCommand } | null;
  path: string | null;
  reason: string | null;
  /** Where it came from, e.g. `.vox/permissions.json rules[2]` or `settings vox.permissions.rules[0]`. */
  origin: string;
  /** One line saying what it is, e.g. `deny run_command "rm -rf *"`. */
  label: string;
}

export interface RuleSet {
  mode: PermissionMode | null;
  rules: PermissionRule[];
}

const RULE_KEYS = new Set(['action', 'tool', 'command', 'path', 'reason']);

function fieldString(v: unknown, source: string, at: string, what: string): string | null {
  if (v === undefined) return null;
  if (typeof v !== 'string' || v.trim().length === 0) throw new PermissionRulesError('invalidRules', source, at, `${what} must be a non-empty string, got ${JSON.stringify(v)}`);
  if (v.length > MAX_RULE_FIELD_CHARS) throw new PermissionRulesError('invalidRules', source, at, `${what} is longer than ${MAX_RULE_FIELD_CHARS} characters`);
  return v.trim();
}

export function ruleLabel(r: Pick<PermissionRule, 'action' | 'tool' | 'command' | 'path'>): string {
  const parts: string[] = [r.action, r.tool];
  if (r.command) parts.push(`command ${JSON.stringify(r.command.text)}`);
  if (r.path) parts.push(`path ${JSON.stringify(r.path)}`);
  return parts.join(' ');
}

function validateRule(raw: unknown, source: string, at: string, origin: string): PermissionRule {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new PermissionRulesError('invalidRules', source, at, `a rule must be an object like {"action": "deny", "command": "rm -rf *"}, got ${JSON.stringify(raw)}`);
  }
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!RULE_KEYS.has(k)) throw new PermissionRulesError('invalidRules', source, `${at}.${k}`, `unknown key; a rule has ${[...RULE_KEYS].join(', ')}`);
  }
  if (!(RULE_ACTIONS as readonly unknown[]).includes(o.action)) {
    throw new PermissionRulesError('invalidRules', source, `${at}.action`, `action must be one of ${RULE_ACTIONS.join(', ')}, got ${JSON.stringify(o.action)}`);
  }
  const tool = fieldString(o.tool, source, `${at}.tool`, 'tool') ?? '*';
  const commandText = fieldString(o.command, source, `${at}.command`, 'command');
  const path = fieldString(o.path, source, `${at}.path`, 'path');
  const reason = fieldString(o.reason, source, `${at}.reason`, 'reason');
  if (o.tool === undefined && commandText === null && path === null) {
    throw new PermissionRulesError('invalidRules', source, at, 'a rule needs a tool, a command or a path (use "tool": "*" to match every call)');
  }
  let command: PermissionRule['command'] = null;
  if (commandText !== null) {
    const parsed = parseCommandLine(commandText);
    if (parsed.kind === 'opaque') throw new PermissionRulesError('invalidRules', source, `${at}.command`, `the pattern cannot be parsed: ${parsed.reason}`);
    if (parsed.commands.length !== 1) throw new PermissionRulesError('invalidRules', source, `${at}.command`, 'a pattern is one command (no &&, ||, ; or |): write one rule per command');
    command = { text: commandText, pattern: parsed.commands[0]! };
  }
  if (path !== null && (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.split('/').includes('..'))) {
    throw new PermissionRulesError('invalidRules', source, `${at}.path`, 'path globs are relative to the workspace root (no leading "/", no "..")');
  }
  const rule = { action: o.action as RuleAction, tool, command, path, reason, origin };
  return { ...rule, label: ruleLabel(rule) };
}

/**
 * Validates a rule object `{mode?, rules?}`. `source` names it in errors (`.vox/permissions.json`,
 * `settings vox.permissions`); `allowMode` false refuses a `mode` (the workspace file may not
 * choose one: a cloned repository must not switch the user to full auto).
 */
export function validateRuleSet(value: unknown, source: string, opts: { allowMode: boolean }): RuleSet {
  if (value === undefined || value === null) return { mode: null, rules: [] };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new PermissionRulesError('invalidRules', source, '$', `must be an object like {"rules": [...]}, got ${JSON.stringify(value)}`);
  }
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k === '$schema') continue;
    if (k !== 'rules' && k !== 'mode') throw new PermissionRulesError('invalidRules', source, `$.${k}`, 'unknown key; expected "rules"' + (opts.allowMode ? ' or "mode"' : ''));
  }
  let mode: PermissionMode | null = null;
  if (o.mode !== undefined) {
    if (!opts.allowMode) throw new PermissionRulesError('invalidMode', source, '$.mode', 'the mode is chosen in the settings or the chat, not in the workspace file');
    if (!(PERMISSION_MODES as readonly unknown[]).includes(o.mode)) {
      throw new PermissionRulesError('invalidMode', source, '$.mode', `mode must be one of ${PERMISSION_MODES.join(', ')}, got ${JSON.stringify(o.mode)}`);
    }
    mode = o.mode as PermissionMode;
  }
  const rules: PermissionRule[] = [];
  if (o.rules !== undefined) {
    if (!Array.isArray(o.rules)) throw new PermissionRulesError('invalidRules', source, '$.rules', `must be an array of rules, got ${JSON.stringify(o.rules)}`);
    if (o.rules.length > MAX_RULES_PER_SOURCE) throw new PermissionRulesError('invalidRules', source, '$.rules', `more than ${MAX_RULES_PER_SOURCE} rules`);
    o.rules.forEach((r, i) => rules.push(validateRule(r, source, `$.rules[${i}]`, `${source} rules[${i}]`)));
  }
  return { mode, rules };
}

/** Parses the text of a rule file (typed errors for bad JSON and bad entries). */
export function parseRuleFile(text: string, source: string = WORKSPACE_RULES_FILE): RuleSet {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PermissionRulesError('invalidRules', source, '$', `not valid JSON (${(e as Error).message})`);
  }
  return validateRuleSet(value, source, { allowMode: false });
}

export function isPermissionMode(v: unknown): v is PermissionMode {
  return (PERMISSION_MODES as readonly unknown[]).includes(v);
}
