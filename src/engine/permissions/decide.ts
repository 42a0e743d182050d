/**
 * The permission decision for one tool call: allow (run without asking), ask (the approval gate),
 * or deny (never runs; the model is told which rule and why). Precedence, first match wins:
 *   1. Plan mode: only read tools run (write/execute are denied).
 *   2. Rules that could not be read: every call is asked (fail closed, never silently dropped).
 *   3. deny rules (from any source) — deny beats allow.
 *   4. a write to a protected path (./protected-paths.ts): asked in every mode, whatever allows it.
 *   5. ask rules.
 *   6. a command the parser cannot see through ($( ), backticks, subshells, $VAR): asked when a
 *      deny or ask rule could apply (it cannot be checked); otherwise no allow rule covers it.
 *   7. allow rules — for a command, every sub-command of its chain must be allowed.
 *   8. the mode: Ask every time (read runs, write/execute ask, or as `vox.approval` says),
 *      Auto-approve edits (write runs too), Full auto (everything runs).
 * Rules from settings and from `.vox/permissions.json` are one list; their order only decides
 * which rule is named when several of the same action match.
 */
import path from 'node:path';
import type { ApprovalPolicy } from '../approvals/approval';
import type { ToolClass } from '../tools/types';
import type { PermissionMode, PermissionRule, PermissionRulesError } from './rules';
import { describeCommand, parseCommandLine, type SimpleCommand } from './shell-parse';
import { pathMatches } from './path-globs';
import { protectedEntry, isPermissionFile, type ProtectedPath } from './protected-paths';

export { pathMatches };

export type PermissionAction = 'allow' | 'ask' | 'deny';
export type DecisionSource = 'rule' | 'mode' | 'plan' | 'parser' | 'rulesError' | 'protected';

export interface PermissionDecision {
  decision: PermissionAction;
  source: DecisionSource;
  /** The deciding rule's origin and label (several for a chain allowed part by part); null when no rule decided. */
  rule: string | null;
  /** A sentence for the user and the model. */
  reason: string;
}

export interface PermissionContext {
  mode: PermissionMode;
  /** The legacy per-class settings (`vox.approval`), used by the Ask mode. */
  policy: ApprovalPolicy;
  rules: readonly PermissionRule[];
  /** Set when a rule source is malformed. */
  broken: PermissionRulesError | null;
  planMode: boolean;
  /** Protected paths the settings add to the built-in ones (./protected-paths.ts). */
  protectedPaths?: readonly ProtectedPath[];
}

export interface CallSubject {
  toolName: string;
  toolClass: ToolClass;
  args: unknown;
  /** Workspace-relative paths the call acts on (the literal one and, for a symlink, where it leads). */
  paths?: string[];
  /** The workspace root: an absolute file a command writes is made relative to it. */
  workspaceRoot?: string;
}

export const MODE_LABELS: Record<PermissionMode, string> = { ask: 'Ask every time', autoEdits: 'Auto-approve edits', fullAuto: 'Full auto' };

/** Environment names that change what a command does; an allow rule does not cover a command that sets them. */
const DANGEROUS_ENV = /^(PATH|LD_.*|DYLD_.*|NODE_OPTIONS|BASH_ENV|ENV|SHELLOPTS|PS4|IFS|PYTHONPATH|PERL5OPT|RUBYOPT|GIT_.*)$/;
const WRITE_TOOL_NAMES = new Set(['write_file', 'apply_edit']);
/**
 * Read-class tools that Plan mode still refuses: a subagent runs its own loop in Act mode (it
 * could write), and killing background work changes what runs.
 */
export const PLAN_MODE_REFUSED_TOOLS: ReadonlySet<string> = new Set(['spawn_subagent', 'command_kill']);

export function allowedInPlanMode(toolName: string, toolClass: ToolClass): boolean {
  return toolClass === 'read' && !PLAN_MODE_REFUSED_TOOLS.has(toolName);
}

/** Splits `-rf` into `-f -r` and sorts each run of short-flag words, so `rm -rf`, `rm -fr` and `rm -r -f` read alike. */
export function normaliseArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    out.push(...[...new Set(run)].sort());
    run = [];
  };
  argv.forEach((w, i) => {
    if (i > 0 && /^-[A-Za-z]+$/.test(w)) for (const ch of w.slice(1)) run.push(`-${ch}`);
    else {
      flush();
      out.push(w);
    }
  });
  flush();
  return out;
}

/** A word of a command pattern against a word of a command: `*` matches any characters. */
function wordMatches(pattern: string, word: string): boolean {
  if (!pattern.includes('*')) return pattern === word;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(word);
}

/** The argument's path relative to the workspace (posix), or null when it leaves it. */
export function relativeArgPath(workspaceRoot: string, p: string): string | null {
  const abs = path.resolve(workspaceRoot, p);
  const rel = path.relative(workspaceRoot, abs).split(path.sep).join('/');
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel === '' ? '.' : rel;
}

/** The pattern's program, words, sudo and env against one sub-command. `strict`: the conditions of an allow. */
export function commandMatches(pattern: SimpleCommand, cmd: SimpleCommand, strict: boolean): boolean {
  if (strict) {
    if (pattern.sudo !== cmd.sudo) return false;
    if (cmd.writesTo.length > 0) return false;
    for (const [k, v] of Object.entries(cmd.env)) if (DANGEROUS_ENV.test(k) && pattern.env[k] !== v) return false;
  }
  const pw = normaliseArgv(pattern.argv);
  const cw = normaliseArgv(cmd.argv);
  if (pw.length === 0 || cw.length === 0) return false;
  const program = (w: string) => (pw[0]!.includes('/') ? w : w.slice(w.lastIndexOf('/') + 1));
  if (!wordMatches(pw[0]!, program(cw[0]!))) return false;
  const restAny = pw.length > 1 && pw[pw.length - 1] === '*';
  const fixed = restAny ? pw.length - 1 : pw.length;
  if (restAny ? cw.length < fixed : cw.length !== fixed) return false;
  for (let i = 1; i < fixed; i++) if (!wordMatches(pw[i]!, cw[i]!)) return false;
  return true;
}

/** `mcp__<server>__*` matches every tool of that MCP server (../mcp/tools.ts names them so). */
const MCP_SERVER_WILDCARD = /^mcp__[a-zA-Z0-9_-]+__\*$/;

function toolMatches(rule: PermissionRule, s: CallSubject): boolean {
  if (MCP_SERVER_WILDCARD.test(rule.tool)) return s.toolName.startsWith(rule.tool.slice(0, -1));
  return rule.tool === '*' || rule.tool === s.toolName || rule.tool === s.toolClass;
}

function commandOf(args: unknown): string | null {
  const c = (args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : null;
}

function named(rule: PermissionRule): string {
  return `${rule.origin}: ${rule.label}`;
}

function because(rule: PermissionRule): string {
  return rule.reason ? ` (${rule.reason})` : '';
}

/** Whether a deny/ask rule catches the call: any sub-command, the call's paths, or a file a redirection writes. */
function catches(rule: PermissionRule, s: CallSubject, commands: SimpleCommand[] | null): boolean {
  const writesTo = commands?.flatMap((c) => c.writesTo) ?? [];
  if (rule.path && writesTo.length > 0 && (rule.tool === '*' || rule.tool === 'write' || WRITE_TOOL_NAMES.has(rule.tool))) {
    if (writesTo.some((f) => pathMatches(rule.path!, f.replace(/^\.\//, '')))) return true;
  }
  if (!toolMatches(rule, s)) return false;
  if (rule.path && !(s.paths ?? []).some((p) => pathMatches(rule.path!, p))) return false;
  if (rule.command) return commands !== null && commands.some((c) => commandMatches(rule.command!.pattern, c, false));
  return true;
}

function modeDecision(ctx: PermissionContext, s: CallSubject, note: string): PermissionDecision {
  const label = MODE_LABELS[ctx.mode];
  const auto = ctx.mode === 'fullAuto' || (ctx.mode === 'autoEdits' && s.toolClass === 'write') || ctx.policy.modeFor(s.toolClass) === 'auto';
  const what = s.toolClass === 'read' ? 'read tools' : s.toolClass === 'write' ? 'file edits' : 'commands';
  return auto
    ? { decision: 'allow', source: 'mode', rule: null, reason: `Mode "${label}" runs ${what} without asking.${note}` }
    : { decision: 'ask', source: 'mode', rule: null, reason: `Mode "${label}" asks before ${what}.${note}` };
}

/** Splits a command line the parser could not read into the words that could name a file. */
const OPAQUE_WORD_SEPARATORS = /[\s;&|<>()`'"]+/;

/**
 * The protected path a write call touches (its path, or a file a command's redirection writes),
 * or null. A command the parser cannot see through (`opaqueLine`) counts as writing every word
 * it names: what it does with them cannot be checked.
 */
function protectedWrite(ctx: PermissionContext, s: CallSubject, commands: SimpleCommand[] | null, opaqueLine: string | null): ReturnType<typeof protectedEntry> {
  const cwd = (s.args as { cwd?: unknown } | null)?.cwd;
  const base = typeof cwd === 'string' ? cwd.replace(/\\/g, '/') : '.';
  const targets = [...(commands ?? []).flatMap((c) => c.writesTo), ...(opaqueLine?.split(OPAQUE_WORD_SEPARATORS).filter((w) => w !== '') ?? [])];
  const root = s.workspaceRoot;
  const redirected = targets.map((f) => (root && path.isAbsolute(f) ? relativeArgPath(root, f) : path.posix.join(base, f.replace(/\\/g, '/'))))
    .filter((f): f is string => f !== null);
  const paths = [...(s.toolClass === 'write' ? s.paths ?? [] : []), ...redirected];
  return paths.length > 0 ? protectedEntry(paths, ctx.protectedPaths ?? []) : null;
}

function protectedReason(hit: NonNullable<ReturnType<typeof protectedEntry>>): string {
  const applies = isPermissionFile(hit.path) ? ' Approving it changes permissions: the new ones apply from the next turn (this turn keeps the rules it started with).' : '';
  return `Protected path: ${hit.path} — ${hit.entry.why}. Writes to protected paths are asked in every mode; no allow rule covers them.${applies}`;
}

export function decidePermission(ctx: PermissionContext, s: CallSubject): PermissionDecision {
  if (ctx.planMode && !allowedInPlanMode(s.toolName, s.toolClass)) {
    return {
      decision: 'deny', source: 'plan', rule: null,
      reason: `The thread is in Plan mode: only read tools run, ${s.toolName} does not. Finish your investigation and call submit_plan; the user switches to Act to carry the plan out.`,
    };
  }
  const line = commandOf(s.args);
  const parsed = line === null ? null : parseCommandLine(line);
  const commands = parsed?.kind === 'parsed' ? parsed.commands : null;
  const guarded = protectedWrite(ctx, s, commands, parsed?.kind === 'opaque' ? line : null);
  if (ctx.broken) {
    const also = guarded ? ` ${protectedReason(guarded)}` : '';
    return { decision: 'ask', source: 'rulesError', rule: null, reason: `Asked because the permission rules cannot be used: ${ctx.broken.message}${also ? `.${also}` : ''}` };
  }
  for (const action of ['deny', 'ask'] as const) {
    if (action === 'ask' && guarded) return { decision: 'ask', source: 'protected', rule: null, reason: protectedReason(guarded) };
    const rule = ctx.rules.find((r) => r.action === action && catches(r, s, commands));
    if (rule) {
      return action === 'deny'
        ? { decision: 'deny', source: 'rule', rule: named(rule), reason: `Denied by ${named(rule)}${because(rule)}.` }
        : { decision: 'ask', source: 'rule', rule: named(rule), reason: `Asked by ${named(rule)}${because(rule)}.` };
    }
  }
  if (parsed?.kind === 'opaque') {
    // A deny or ask rule that could apply cannot be checked: ask. Without one no allow rule vouches for it; the mode decides.
    if (ctx.rules.some((r) => r.action !== 'allow' && (toolMatches(r, s) || r.path !== null))) {
      return { decision: 'ask', source: 'parser', rule: null, reason: `Asked because ${parsed.reason}, which the deny and ask rules cannot check.` };
    }
    return modeDecision(ctx, s, ` (No allow rule applies: ${parsed.reason}.)`);
  }
  const allows = ctx.rules.filter((r) => r.action === 'allow' && toolMatches(r, s) && (!r.path || (s.paths ?? []).some((p) => pathMatches(r.path!, p))));
  let note = '';
  if (commands) {
    const used: PermissionRule[] = [];
    const uncovered: SimpleCommand[] = [];
    for (const c of commands) {
      const r = allows.find((a) => (a.command ? commandMatches(a.command.pattern, c, true) : c.writesTo.length === 0 && !c.sudo));
      if (r) {
        if (!used.includes(r)) used.push(r);
      } else uncovered.push(c);
    }
    if (uncovered.length === 0 && used.length > 0) {
      return { decision: 'allow', source: 'rule', rule: used.map(named).join('; '), reason: `Allowed by ${used.map(named).join('; ')}.` };
    }
    if (used.length > 0) note = ` No allow rule covers "${describeCommand(uncovered[0]!)}".`;
  } else {
    const rule = allows.find((r) => !r.command);
    if (rule) return { decision: 'allow', source: 'rule', rule: named(rule), reason: `Allowed by ${named(rule)}.` };
  }
  return modeDecision(ctx, s, note);
}
