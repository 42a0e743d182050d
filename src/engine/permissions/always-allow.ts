/**
 * "Always allow" from an approval: the narrow rules suggested for a waiting call (a command's
 * leading words, a file's directory glob, an ordinary tool's name) and the check of the user's
 * choice before it becomes an allow rule. Never a blanket allow: `*`, `**`, an empty prefix, a
 * shell or interpreter alone, a chained command, every command or every write are refused with
 * a typed `permission/unsafeRule`; the rule must also cover the call being approved.
 */
import path from 'node:path';
import { VoxError } from '../../protocol/wire/vox-error';
import type { ToolClass } from '../tools/types';
import { commandMatches, pathMatches, relativeArgPath } from './decide';
import { parseCommandLine, type SimpleCommand } from './shell-parse';

export const ALWAYS_ALLOW_KINDS = ['commandPrefix', 'tool', 'pathPattern'] as const;
export type AlwaysAllowKind = (typeof ALWAYS_ALLOW_KINDS)[number];
export type AlwaysAllowScope = 'thread' | 'workspace';

export interface AlwaysAllowSuggestion { kind: AlwaysAllowKind; value: string; label: string }
export interface AlwaysAllowChoice { kind: AlwaysAllowKind; value: string; scope: AlwaysAllowScope }
/** The rule as written to `.vox/permissions.json` or the thread's rules. */
export interface AllowRuleJson { action: 'allow'; tool: string; command?: string; path?: string }

/** Most leading words of a suggested command prefix (program included): `npm run build`. */
export const MAX_PREFIX_WORDS = 3;
/** Programs that run arbitrary code given to them: a prefix of one of these alone would allow anything. */
export const INTERPRETERS: ReadonlySet<string> = new Set([
  'sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'csh', 'tcsh', 'pwsh', 'powershell', 'cmd', 'env', 'sudo', 'doas', 'xargs', 'eval', 'exec',
  'node', 'deno', 'bun', 'npx', 'pnpx', 'bunx', 'tsx', 'ts-node', 'python', 'python3', 'python2', 'py', 'ruby', 'perl', 'php', 'lua', 'java', 'osascript',
]);
/** Tools whose calls are never allowed by name alone: commands need a prefix, file writes a path pattern. */
const NAME_ONLY_REFUSED = new Set(['run_command', 'write_file', 'apply_edit']);
const TOOL_CLASSES = new Set(['read', 'write', 'execute']);
/** A word that reads as a sub-command (`test`, `run`, `build:prod`), not an option, a path or a value. */
const SUBCOMMAND_WORD = /^[A-Za-z][A-Za-z0-9:_-]*$/;

/** A suggested or chosen rule that would allow too much, or does not fit the call. */
export class UnsafeRuleError extends VoxError<'permission'> {
  override readonly name = 'UnsafeRuleError';
  readonly domain = 'permission' as const;
  constructor(message: string) {
    super('unsafeRule', message);
  }
}

export interface AlwaysAllowCall { toolName: string; toolClass: ToolClass; args: unknown }

function commandArg(args: unknown): string | null {
  const c = (args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : null;
}

function pathArg(args: unknown): string | null {
  const p = (args as { path?: unknown } | null)?.path;
  return typeof p === 'string' ? p : null;
}

const basename = (w: string) => w.slice(w.lastIndexOf('/') + 1);

/** The single command of a line, or why a prefix rule cannot be made from it. */
function singleCommand(line: string): SimpleCommand | string {
  const parsed = parseCommandLine(line);
  if (parsed.kind === 'opaque') return `the command cannot be checked (${parsed.reason})`;
  if (parsed.commands.length !== 1) return 'the command is a chain (&&, ||, ;, |); approve it once, or add one rule per command in the permissions file';
  return parsed.commands[0]!;
}

/** The leading words of a command (`npm test` of `npm test -- --grep x`); an interpreter keeps its script (`node build.js`). */
export function leadingWords(cmd: SimpleCommand): string[] | null {
  const words = [basename(cmd.argv[0] ?? '')];
  if (!words[0]) return null;
  for (const w of cmd.argv.slice(1)) {
    if (words.length >= MAX_PREFIX_WORDS) break;
    if (SUBCOMMAND_WORD.test(w) || (words.length === 1 && INTERPRETERS.has(words[0]!) && !w.startsWith('-') && !w.includes('*'))) words.push(w);
    else break;
  }
  return words.length === 1 && INTERPRETERS.has(words[0]!) ? null : words;
}

/** The directory glob of a workspace-relative file (`src/**`), or the file itself at the root. */
function directoryGlob(rel: string): string {
  const dir = path.posix.dirname(rel);
  return dir === '.' ? rel : `${dir}/**`;
}

/** The narrow rules offered for a waiting call (none when no safe one exists, e.g. a chained command). */
export function suggestAlwaysAllow(call: AlwaysAllowCall, workspaceRoot: string): AlwaysAllowSuggestion[] {
  const line = commandArg(call.args);
  if (call.toolName === 'run_command' || line !== null) {
    if (line === null) return [];
    const cmd = singleCommand(line);
    if (typeof cmd === 'string' || cmd.sudo || cmd.writesTo.length > 0) return [];
    const words = leadingWords(cmd);
    return words ? [{ kind: 'commandPrefix', value: words.join(' '), label: `commands starting with "${words.join(' ')}"` }] : [];
  }
  const p = pathArg(call.args);
  if (p !== null) {
    const rel = relativeArgPath(workspaceRoot, p);
    if (rel === null || rel === '.') return [];
    const glob = directoryGlob(rel);
    return [{ kind: 'pathPattern', value: glob, label: `${call.toolName} on ${glob}` }];
  }
  return NAME_ONLY_REFUSED.has(call.toolName) ? [] : [{ kind: 'tool', value: call.toolName, label: `every ${call.toolName} call` }];
}

/** Checks the user's choice against the waiting call and turns it into an allow rule (typed refusal otherwise). */
export function alwaysAllowRule(choice: Omit<AlwaysAllowChoice, 'scope'>, call: AlwaysAllowCall, workspaceRoot: string): AllowRuleJson {
  const value = choice.value.trim();
  if (value.length === 0) throw new UnsafeRuleError('An always-allow rule needs a value; an empty one would allow everything.');
  if (choice.kind === 'commandPrefix') {
    const line = commandArg(call.args);
    if (line === null) throw new UnsafeRuleError(`A command prefix applies to run_command, not to ${call.toolName}.`);
    const called = singleCommand(line);
    if (typeof called === 'string') throw new UnsafeRuleError(`No prefix rule for this call: ${called}.`);
    const prefix = singleCommand(value);
    if (typeof prefix === 'string') throw new UnsafeRuleError(`The prefix "${value}" is not one plain command: ${prefix}.`);
    if (prefix.sudo || Object.keys(prefix.env).length > 0 || prefix.writesTo.length > 0) throw new UnsafeRuleError(`The prefix "${value}" may not use sudo, variables or redirections.`);
    if (prefix.argv.some((w) => w.includes('*') || w.includes('?'))) throw new UnsafeRuleError(`The prefix "${value}" may not contain wildcards; it is matched word by word.`);
    if (prefix.argv.length === 1 && INTERPRETERS.has(basename(prefix.argv[0]!))) {
      throw new UnsafeRuleError(`"${value}" alone runs any code; allow a longer prefix (e.g. "${value} <script>") or approve once.`);
    }
    const command = `${prefix.argv.join(' ')} *`;
    const pattern = singleCommand(command) as SimpleCommand;
    if (!commandMatches(pattern, called, true)) throw new UnsafeRuleError(`The prefix "${value}" does not cover the command being approved.`);
    return { action: 'allow', tool: 'run_command', command };
  }
  if (choice.kind === 'pathPattern') {
    const segments = value.split('/').filter((s) => s.length > 0);
    if (value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value) || segments.includes('..')) throw new UnsafeRuleError(`The path pattern "${value}" must be relative to the workspace (no leading "/", no "..").`);
    if (segments.length === 0 || segments[0] === '.' || /[*?[]/.test(segments[0]!)) {
      throw new UnsafeRuleError(`The path pattern "${value}" would cover the whole workspace; name a directory first (e.g. "src/**").`);
    }
    const p = pathArg(call.args);
    const rel = p === null ? null : relativeArgPath(workspaceRoot, p);
    if (rel === null || !pathMatches(value, rel)) throw new UnsafeRuleError(`The path pattern "${value}" does not cover the path being approved.`);
    return { action: 'allow', tool: call.toolName, path: value };
  }
  if (value !== call.toolName) throw new UnsafeRuleError(`A tool rule names the tool being approved (${call.toolName}), got "${value}".`);
  if (value === '*' || TOOL_CLASSES.has(value) || value.includes('*')) throw new UnsafeRuleError(`"${value}" is more than one tool.`);
  if (NAME_ONLY_REFUSED.has(value) || commandArg(call.args) !== null) {
    throw new UnsafeRuleError(`Allowing every ${value} call is a blanket allow; choose a command prefix or a path pattern.`);
  }
  return { action: 'allow', tool: value };
}

/**
 * A waiting call as clients see it, with its "Always allow" suggestions. None for arguments that
 * are not JSON, for a protected path (./protected-paths.ts: asked whatever allows it, so a rule
 * would change nothing), nor for a call that waits for a failed `safeguard` (no rule's to allow).
 */
export function withSuggestions<R extends { toolName: string; toolClass: ToolClass; argumentsJson: string; protectedPath?: boolean; safeguard?: string }>(req: R, workspaceRoot: string): R & { alwaysAllow: AlwaysAllowSuggestion[] } {
  if (req.protectedPath || req.safeguard !== undefined) return { ...req, alwaysAllow: [] };
  let args: unknown;
  try {
    args = JSON.parse(req.argumentsJson);
  } catch {
    return { ...req, alwaysAllow: [] };
  }
  return { ...req, alwaysAllow: suggestAlwaysAllow({ toolName: req.toolName, toolClass: req.toolClass, args }, workspaceRoot) };
}
