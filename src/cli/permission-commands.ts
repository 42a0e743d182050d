/**
 * `vox permissions` — the permission mode in force and the effective rules (settings and the
 * workspace's .vox/permissions.json, in the order they apply), through `getPermissions`; a
 * malformed rule source is printed with its file, JSON path and reason, and the exit code is 1.
 *   vox permissions [--thread T] [--mode M] [--cwd DIR] [--json]
 *   vox plan show <threadId> [--json]      the thread's Plan / Act mode and plan (a checklist)
 *   vox plan mode <threadId> <plan|act>    switches the thread
 */
import type { Command } from 'commander';
import type { PermissionsView, PlanView } from '../protocol/commands/permissions';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

export const PERMISSION_MODE_NAMES = ['ask', 'autoEdits', 'fullAuto'] as const;

/** The mode flag, checked before anything runs (a typo is a usage error, not a silent default). */
export function checkMode(mode: string | undefined, cmd: Command): string | undefined {
  if (mode !== undefined && !(PERMISSION_MODE_NAMES as readonly string[]).includes(mode)) {
    throw new CliUsageError(`--mode must be one of ${PERMISSION_MODE_NAMES.join(', ')}, got ${JSON.stringify(mode)}`, cmd);
  }
  return mode;
}

/**
 * How `--yes` answers a waiting call: it approves every call but a protected write, which is
 * denied with its reason (a protected path is asked in every mode, so a blanket flag is not an answer).
 */
export function yesAnswer(req: { toolName: string; protectedPath?: boolean; reason?: string }): { decision: 'approved' | 'denied'; note: string | null } {
  if (!req.protectedPath) return { decision: 'approved', note: null };
  return { decision: 'denied', note: `[vox] denied ${req.toolName}: ${req.reason ?? 'a protected path'} (--yes does not approve protected paths: answer at a terminal without --yes)\n` };
}

export function formatPermissions(v: PermissionsView): string {
  const lines = [`mode: ${v.modeLabel} (${v.mode}; ${v.modeSource === 'thread' ? "the thread's own" : v.modeSource === 'settings' ? 'from the settings' : 'the default'})`];
  if (v.workMode) lines.push(`thread: ${v.workMode === 'plan' ? 'Plan (read tools only)' : 'Act'}`);
  lines.push(`precedence: Plan mode > deny > protected path (asked) > ask > allow > mode; a command chain is allowed only when every part is`);
  if (v.rules.length === 0) lines.push(`rules: none (add some to ${v.workspaceFile} or the vox.permissionRules setting)`);
  else {
    lines.push('rules:');
    for (const r of v.rules) lines.push(`  ${r.label}${r.reason ? ` — ${r.reason}` : ''}    [${r.origin}]`);
  }
  if (v.protectedPaths && v.protectedPaths.length > 0) {
    lines.push('protected paths (writes asked in every mode):');
    for (const p of v.protectedPaths) lines.push(`  ${p.path} — ${p.why}${p.source === 'settings' ? ' [settings]' : ''}`);
  }
  for (const e of v.errors) lines.push(`error: ${e.message}`);
  if (v.errors.length > 0) lines.push('(while a rule source is broken, every tool call is asked)');
  return lines.join('\n');
}

export function formatPlan(p: PlanView | null, workMode: string): string {
  if (!p) return `${workMode === 'plan' ? 'Plan' : 'Act'} mode; no plan yet`;
  const mark: Record<string, string> = { pending: '[ ]', inProgress: '[~]', done: '[x]', skipped: '[-]' };
  return [`${p.title}  (${p.planId}, ${p.status}; thread in ${workMode === 'plan' ? 'Plan' : 'Act'} mode)`,
    ...p.steps.map((s) => `${mark[s.status] ?? '[ ]'} ${s.id}  ${s.text}${s.note ? `  — ${s.note}` : ''}`)].join('\n');
}

export function registerPermissionCommands(program: Command, run: (p: Promise<number>) => void): void {
  program.command('permissions').description('the permission mode in force and the effective rules (settings, .vox/permissions.json)')
    .option('--thread <id>', 'as they apply to this thread').option('--mode <mode>', `as with this mode (${PERMISSION_MODE_NAMES.join(' | ')})`)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((o: Flags & { thread?: string; mode?: string; cwd?: string }, cmd: Command) => run((async () => {
      const mode = checkMode(o.mode, cmd);
      return withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading: true, ...(mode ? { permissionMode: mode } : {}) }, async ({ client }) => {
        const v = await client.call('getPermissions', o.thread ? { threadId: o.thread } : {});
        print(o, formatPermissions(v), v);
        return v.errors.length > 0 ? 1 : 0;
      });
    })()));
  const plan = program.command('plan').description('Plan mode of a thread: show | mode');
  plan.command('show').description("a thread's Plan / Act mode and its plan as a checklist").argument('<threadId>').option('--cwd <dir>').option('--json', 'print JSON')
    .action((threadId: string, o: Flags & { cwd?: string }) => run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
      const v = await client.call('getPlan', { threadId });
      print(o, formatPlan(v.plan, v.workMode), v);
      return 0;
    })));
  plan.command('mode').description('switch a thread to Plan (read tools only, answers with a plan) or Act').argument('<threadId>').argument('<mode>', 'plan | act')
    .option('--cwd <dir>').option('--json', 'print JSON')
    .action((threadId: string, mode: string, o: Flags & { cwd?: string }, cmd: Command) => run((async () => {
      if (mode !== 'plan' && mode !== 'act') throw new CliUsageError(`the mode is plan or act, got ${JSON.stringify(mode)}`, cmd);
      return withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false }, async ({ client }) => {
        const v = await client.call('setWorkMode', { threadId, mode });
        print(o, `thread ${threadId} is in ${v.workMode === 'plan' ? 'Plan' : 'Act'} mode`, v);
        return 0;
      });
    })()));
}
