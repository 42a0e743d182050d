/**
 * PermissionService: the rules and mode in force for a thread, and the decision for one tool
 * call (./decide.ts). Rules come from the host's settings (`vox.permissionRules`, VS Code passes
 * them in) and from the workspace's `.vox/permissions.json`, which the engine reads itself —
 * confined to the workspace: neither `.vox` nor the file may be a symlink, the file is opened
 * with O_NOFOLLOW and must be a regular file. The mode is the thread's own (chosen in the chat),
 * else the settings' `vox.permissionMode`, else Ask every time. A malformed source is reported
 * (typed, with file and JSON path) and makes every call asked until fixed. The file is re-read on
 * the next decision after any change (its stamp); `onChange` also tells listeners when it changed
 * on disk, whoever wrote it (../platform/file-watch.ts), so views show the new rules at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ApprovalPolicy } from '../approvals/approval';
import type { Host } from '../host';
import { watchWorkspaceFiles, type FileWatch } from '../platform/file-watch';
import type { VoxStore } from '../store/store';
import { threadModes } from '../store/plan-reads';
import { threadRuleJson } from './rule-writes';
import type { ToolClass } from '../tools/types';
import { decidePermission, MODE_LABELS, relativeArgPath, type PermissionContext, type PermissionDecision } from './decide';
import {
  MAX_RULES_FILE_BYTES, PermissionRulesError, WORKSPACE_RULES_FILE, isPermissionMode, parseRuleFile, validateRuleSet,
  type PermissionMode, type PermissionRule,
} from './rules';

/** Distinct rule-source errors remembered as reported (then the memory starts over). */
const MAX_REPORTED_ERRORS = 32;

/** Where the settings rules are named in errors and reasons. */
export const SETTINGS_RULES_SOURCE = 'settings (vox.permissionRules)';

/** Where a thread's own rules are named in reasons (`this thread rules[0]: allow run_command …`). */
export const THREAD_RULES_SOURCE = 'this thread';

export type ModeSource = 'thread' | 'settings' | 'default';

export interface EffectivePermissions {
  mode: PermissionMode;
  modeLabel: string;
  modeSource: ModeSource;
  rules: Array<{ origin: string; action: PermissionRule['action']; tool: string; command: string | null; path: string | null; reason: string | null; label: string; scope: 'settings' | 'workspace' | 'thread'; index: number }>;
  /** Malformed sources, with where and why (while any is set, every call is asked). */
  errors: Array<{ source: string; jsonPath: string; reason: string; message: string }>;
  workspaceFile: string;
}

interface FileCache { key: string; rules: PermissionRule[]; error: PermissionRulesError | null }

export class PermissionService {
  private cache: FileCache | null = null;
  private readonly listeners = new Set<() => void>();
  private watch: FileWatch | null = null;

  constructor(private readonly deps: { workspaceRoot: string; host: Host; store: VoxStore; policy: () => ApprovalPolicy }) {}

  /** Calls `listener` after `.vox/permissions.json` changed on disk (written, replaced, created, deleted); the watch starts with the first listener. */
  onChange(listener: () => void): () => void {
    this.watch ??= watchWorkspaceFiles(this.deps.workspaceRoot, [WORKSPACE_RULES_FILE], () => {
      this.workspaceRules(); // a broken file is reported now, not at the next tool call
      for (const l of [...this.listeners]) l();
    });
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  dispose(): void {
    this.watch?.close();
    this.watch = null;
    this.listeners.clear();
  }

  /** Rule-source errors already reported to the host (each once, until it changes). */
  private readonly reported = new Set<string>();

  /** Tells the host about a broken rule source once (the log, and a warning in VS Code). */
  private report(error: PermissionRulesError | null): void {
    if (!error || this.reported.has(error.message)) return;
    if (this.reported.size >= MAX_REPORTED_ERRORS) this.reported.clear();
    this.reported.add(error.message);
    this.deps.host.notify({ level: 'warning', source: 'permissions', message: `${error.message}. Every tool call is asked until this is fixed.` });
  }

  /** The workspace file's rules (re-read when it changes), or its typed error. */
  workspaceRules(): { rules: PermissionRule[]; error: PermissionRulesError | null } {
    const r = this.readWorkspaceRules();
    this.report(r.error);
    return r;
  }

  private readWorkspaceRules(): { rules: PermissionRule[]; error: PermissionRulesError | null } {
    const root = this.deps.workspaceRoot;
    const fail = (reason: string) => ({ rules: [], error: new PermissionRulesError('unreadableRules', WORKSPACE_RULES_FILE, '$', reason) });
    let dirStat: fs.Stats;
    try {
      dirStat = fs.lstatSync(path.join(root, '.vox'));
    } catch {
      return { rules: [], error: null };
    }
    if (dirStat.isSymbolicLink()) return fail('.vox is a symbolic link; the rule file is only read from inside the workspace');
    if (!dirStat.isDirectory()) return { rules: [], error: null };
    const file = path.join(root, WORKSPACE_RULES_FILE);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      return { rules: [], error: null };
    }
    if (st.isSymbolicLink()) return fail('the file is a symbolic link; it is only read from inside the workspace');
    if (!st.isFile()) return fail('not a regular file');
    if (st.size > MAX_RULES_FILE_BYTES) return fail(`larger than ${MAX_RULES_FILE_BYTES} bytes`);
    const key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (this.cache?.key === key) return this.cache;
    let text: string;
    try {
      const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
      try {
        if (!fs.fstatSync(fd).isFile()) return fail('not a regular file');
        text = fs.readFileSync(fd, 'utf8');
      } finally {
        fs.closeSync(fd);
      }
    } catch (e) {
      return fail(`cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    let entry: FileCache;
    try {
      entry = { key, rules: parseRuleFile(text).rules, error: null };
    } catch (e) {
      if (!(e instanceof PermissionRulesError)) throw e;
      entry = { key, rules: [], error: e };
    }
    this.cache = entry;
    return entry;
  }

  /** The settings' mode and rules, or their typed error. */
  settingsRules(): { mode: PermissionMode | null; rules: PermissionRule[]; error: PermissionRulesError | null } {
    try {
      const set = validateRuleSet(this.deps.host.permissionSettings?.() ?? undefined, SETTINGS_RULES_SOURCE, { allowMode: true });
      return { ...set, error: null };
    } catch (e) {
      if (!(e instanceof PermissionRulesError)) throw e;
      this.report(e);
      return { mode: null, rules: [], error: e };
    }
  }

  /** The mode in force for a thread (or the workspace default without one) and where it comes from. */
  mode(threadId?: string): { mode: PermissionMode; source: ModeSource } {
    const own = threadId ? threadModes(this.deps.store.db, threadId)?.permissionMode : null;
    if (own && isPermissionMode(own)) return { mode: own, source: 'thread' };
    const fromSettings = this.settingsRules().mode;
    return fromSettings ? { mode: fromSettings, source: 'settings' } : { mode: 'ask', source: 'default' };
  }

  /** A thread's own allow rules ("Always allow" for this thread), or its typed error. */
  threadRules(threadId: string | undefined): { rules: PermissionRule[]; error: PermissionRulesError | null } {
    if (!threadId) return { rules: [], error: null };
    try {
      return { rules: validateRuleSet({ rules: threadRuleJson(this.deps.store, threadId) }, THREAD_RULES_SOURCE, { allowMode: false }).rules, error: null };
    } catch (e) {
      if (!(e instanceof PermissionRulesError)) throw e;
      this.report(e);
      return { rules: [], error: e };
    }
  }

  context(threadId: string | undefined, opts: { planMode?: boolean } = {}): PermissionContext {
    const s = this.settingsRules();
    const w = this.workspaceRules();
    const t = this.threadRules(threadId);
    return {
      mode: this.mode(threadId).mode,
      policy: this.deps.policy(),
      rules: [...s.rules, ...w.rules, ...t.rules],
      broken: s.error ?? w.error ?? t.error,
      planMode: opts.planMode ?? (threadId ? threadModes(this.deps.store.db, threadId)?.workMode === 'plan' : false),
    };
  }

  /** The decision for one call of a thread's run (`args`: the parsed arguments). */
  decide(threadId: string, call: { toolName: string; toolClass: ToolClass; args: unknown; workspaceRoot?: string }): PermissionDecision {
    const root = call.workspaceRoot ?? this.deps.workspaceRoot;
    return decidePermission(this.context(threadId), { toolName: call.toolName, toolClass: call.toolClass, args: call.args, paths: this.pathsOf(root, call.args) });
  }

  /** The call's path argument relative to the workspace, and where it really leads when a symlink is on the way. */
  private pathsOf(root: string, args: unknown): string[] {
    const p = (args as { path?: unknown } | null)?.path;
    const given = typeof p === 'string' ? p : '.';
    const rel = relativeArgPath(root, given);
    if (rel === null) return [];
    const out = [rel];
    // The longest existing ancestor, resolved: a link inside the workspace to .github/ is still .github/.
    let probe = path.resolve(root, given);
    let rest = '';
    for (let i = 0; i < 64; i++) {
      try {
        const real = fs.realpathSync(probe);
        const realRoot = fs.realpathSync(root);
        const r = relativeArgPath(realRoot, path.join(real, rest));
        if (r !== null && r !== rel) out.push(r);
        break;
      } catch {
        const parent = path.dirname(probe);
        if (parent === probe) break;
        rest = path.join(path.basename(probe), rest);
        probe = parent;
      }
    }
    return out;
  }

  effective(threadId?: string): EffectivePermissions {
    const s = this.settingsRules();
    const w = this.workspaceRules();
    const { mode, source } = this.mode(threadId);
    const t = this.threadRules(threadId);
    const errors = [s.error, w.error, t.error].filter((e): e is PermissionRulesError => e !== null)
      .map((e) => ({ source: e.source, jsonPath: e.jsonPath, reason: e.reason, message: e.message }));
    return {
      mode, modeLabel: MODE_LABELS[mode], modeSource: source, errors, workspaceFile: WORKSPACE_RULES_FILE,
      rules: ([['settings', s.rules], ['workspace', w.rules], ['thread', t.rules]] as const).flatMap(([scope, list]) => list.map((r, index) => ({
        origin: r.origin, action: r.action, tool: r.tool, command: r.command?.text ?? null, path: r.path, reason: r.reason, label: r.label, scope, index,
      }))),
    };
  }
}
