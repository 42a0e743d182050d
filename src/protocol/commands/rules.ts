/**
 * Rule commands (SPEC 6.1) and the system prompt (SPEC 6.2): list the rules in force (user rules
 * from settings, workspace rules from `.vox/rules/*.md`, peer files such as CLAUDE.md), read one,
 * create or update one, enable or disable one, preview the `<user_rules>` block a prompt would
 * get, and the resolved system prompt of a thread. Also the rule-name rule every client shares.
 */
import { arrayOf, bool, int, literal, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { MENTION_KINDS } from '../mentions';
import { MAX_PROMPT_CHARS, name } from './common';
import { defineCommand } from './define';

/** What a rule name may be: letters, digits, `_` and `-` (so `@name` can never be a regex or a path). */
export const RULE_NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
/** Longest rule name. */
export const MAX_RULE_NAME_CHARS = 64;
/** Longest rule body a client may send (the file limit of the engine is the same). */
export const MAX_RULE_BODY_CHARS = 64_000;
/** Longest description. */
export const MAX_RULE_DESCRIPTION_CHARS = 500;
/** Most `paths` globs of one rule. */
export const MAX_RULE_PATHS = 20;

/** Names a rule may not take: every @-mention kind (`@file`, `@git`, …), and `workspace`, `web`, `rule`. */
export const RESERVED_RULE_NAMES: readonly string[] = [...MENTION_KINDS, 'workspace', 'web', 'rule'];

/** Why a name is not a rule name (null: it is one). */
export function ruleNameProblem(n: string): string | null {
  if (n.length === 0) return 'a rule name cannot be empty';
  if (n.length > MAX_RULE_NAME_CHARS) return `a rule name has at most ${MAX_RULE_NAME_CHARS} characters`;
  if (!RULE_NAME_PATTERN.test(n)) return `"${n}" is not a rule name: use only letters, digits, "_" and "-"`;
  if (RESERVED_RULE_NAMES.includes(n.toLowerCase())) return `"${n}" is reserved (it is an @-mention kind or a built-in): choose another name`;
  return null;
}

export const ruleAttach = literal('always', 'manual');
export const ruleScope = literal('user', 'workspace');

export const ruleView = object({
  name: str,
  /** `user`: settings (vox.rules); `workspace`: .vox/rules/<name>.md; `peer`: CLAUDE.md, AGENTS.md, .clinerules. */
  scope: literal('user', 'workspace', 'peer'),
  attach: ruleAttach,
  enabled: bool,
  description: nullable(str),
  paths: arrayOf(str),
  /** Workspace-relative file, or `settings (vox.rules)`. */
  source: str,
  /** The body with $variables resolved (what the model would read). */
  body: str,
  /** Set when another rule of this name was overridden by this one (workspace beats user). */
  overrides: nullable(str),
});
export type RuleView = Infer<typeof ruleView>;

export const ruleListView = object({
  rules: arrayOf(ruleView),
  /** Rule files that could not be read or parsed; each broken file is listed here and skipped. */
  errors: arrayOf(object({ source: str, line: nullable(int), code: str, message: str })),
  /** Whether CLAUDE.md, AGENTS.md and .clinerules are read (setting vox.readPeerRuleFiles). */
  readPeerFiles: bool,
});
export type RuleListView = Infer<typeof ruleListView>;

/** Any short string: the engine checks the name itself, so a bad one gets `rule/invalidName` saying why. */
const ruleNameParam = refine(str, (s) => s.length <= MAX_RULE_NAME_CHARS * 4, `at most ${MAX_RULE_NAME_CHARS * 4} characters`);
const body = refine(str, (s) => s.length <= MAX_RULE_BODY_CHARS, `at most ${MAX_RULE_BODY_CHARS} characters`);
const description = refine(str, (s) => s.length <= MAX_RULE_DESCRIPTION_CHARS, `at most ${MAX_RULE_DESCRIPTION_CHARS} characters`);
const paths = refine(arrayOf(str), (l) => l.length <= MAX_RULE_PATHS && l.every((p) => p.length > 0 && p.length <= 500), `at most ${MAX_RULE_PATHS} non-empty globs`);

export const rulesPreview = object({
  /** The prompt with the manual rule tokens taken out (what is stored and shown). */
  prompt: str,
  /** The rules attached, in block order. */
  rules: arrayOf(str),
  /** The `<user_rules>` block appended to the turn ('' when no rule attaches). */
  block: str,
  /** `@word` tokens that are neither a rule nor a known mention. */
  warnings: arrayOf(str),
});
export type RulesPreview = Infer<typeof rulesPreview>;

export const ruleCommands = {
  listRules: defineCommand('listRules', {
    readOnly: true,
    summary: 'Every rule: user (settings), workspace (.vox/rules/*.md) and peer files (CLAUDE.md, AGENTS.md, .clinerules), with attach mode, enabled state, source and the files that did not parse.',
    requires: ['read'],
    params: {},
    result: ruleListView,
  }),
  getRule: defineCommand('getRule', {
    readOnly: true,
    summary: 'One rule by name (`rule/unknownRule` when there is none).',
    requires: ['read'],
    params: { name: ruleNameParam },
    result: ruleView,
  }),
  createRule: defineCommand('createRule', {
    readOnly: true,
    summary: 'Creates a rule: in the user settings (scope user) or as .vox/rules/<name>.md (scope workspace). Bad, reserved or taken names are refused.',
    requires: ['owner'],
    params: { scope: ruleScope, name: ruleNameParam, attach: ruleAttach, body, description: optional(description), paths: optional(paths) },
    result: ruleView,
  }),
  updateRule: defineCommand('updateRule', {
    readOnly: true,
    summary: 'Changes a user or workspace rule (attach mode, body, description, paths); peer files are edited as files.',
    requires: ['owner'],
    params: { name: ruleNameParam, attach: optional(ruleAttach), body: optional(body), description: optional(nullable(description)), paths: optional(paths) },
    result: ruleView,
  }),
  setRuleEnabled: defineCommand('setRuleEnabled', {
    readOnly: true,
    summary: 'Enables or disables a rule in this workspace (kept in .vox/rules/.disabled.json).',
    requires: ['owner'],
    params: { name: ruleNameParam, enabled: bool },
    result: ruleView,
  }),
  previewRules: defineCommand('previewRules', {
    readOnly: true,
    summary: 'What a prompt would become: its manual rule tokens stripped, the <user_rules> block it would get, and its warnings.',
    requires: ['read'],
    params: { prompt: refine(str, (s) => s.length <= MAX_PROMPT_CHARS, `at most ${MAX_PROMPT_CHARS} characters`), mentionPaths: optional(arrayOf(str)) },
    result: rulesPreview,
  }),
  getSystemPrompt: defineCommand('getSystemPrompt', {
    readOnly: true,
    summary: 'The system prompt a turn of the thread (null: a new thread) would get, $variables resolved, and the <user_rules> block of its always rules.',
    requires: ['read'],
    params: { threadId: optional(nullable(name)) },
    result: object({ systemPrompt: str, rulesBlock: str, rules: arrayOf(str) }),
  }),
};
