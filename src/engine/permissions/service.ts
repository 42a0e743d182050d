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
 * The settings may add protected paths (./protected-paths.ts). A turn's calls are decided by the
 * rules it started with, narrowed but never widened by later changes (./turn-snapshot.ts). A
 * subagent's thread runs within the ceiling its parent's limits set (./thread-ceiling.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ApprovalPolicy } from '../approvals/approval';
import type { HookBus } from '../agent/hooks';
import type { Host } from '../host';
import { watchWorkspaceFiles, type FileWatch } from '../platform/file-watch';
import type { VoxStore } from '../store/store';
import { threadModes } from '../store/plan-reads';
import { threadRuleJson } from './rule-writes';
import type { ToolClass } from '../tools/types';
import { resolveRealPath } from '../tools/workspace-path';
import { decidePermission, MODE_LABELS, relativeArgPath, type PermissionContext, type PermissionDecision } from './decide';
import {
  MAX_RULES_FILE_BYTES, PermissionRulesError, WORKSPACE_RULES_FILE, isPermissionMode, parseRuleFile, validateRuleSet,
  type PermissionMode, type PermissionRule,
} from './rules';
import { BUILTIN_PROTECTED_PATHS, validateProtectedPaths, type ProtectedPath } from './protected-paths';
import { combineWithTurnStart, MAX_TURN_SNAPSHOTS, type PermissionSources, type TurnSnapshot } from './turn-snapshot';
import { childLimits, clampToCeiling, threadCeiling, type ChildLimits } from './thread-ceiling';

/** The turn-start snapshot is taken before any other turnStart handler runs. */
const TURN_SNAPSHOT_ORDER = -1_000;

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
  /** Paths whose writes are asked in every mode: the built-in ones, then the settings'. */
  protectedPaths: Array<{ path: string; why: string; source: 'builtin' | 'settings' }>;
}

interface FileCache { key: string; rules: PermissionRule[]; error: PermissionRulesError | null }

export class PermissionService {
  private cache: FileCache | null = null;
  private readonly listeners = new Set<() => void>();
  private watch: FileWatch | null = null;
  /** The permission sources each running turn started with, by run id (./turn-snapshot.ts). */
  private readonly turns = new Map<string, TurnSnapshot>();

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
    this.turns.clear();
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

  /** The settings' mode, rules and added protected paths, or their typed error. */
  settingsRules(): { mode: PermissionMode | null; rules: PermissionRule[]; protectedPaths: ProtectedPath[]; error: PermissionRulesError | null } {
    try {
      const raw = this.deps.host.permissionSettings?.() ?? undefined;
      const { protectedPaths, ...rest } = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { protectedPaths: undefined };
      const set = validateRuleSet(raw && typeof raw === 'object' && !Array.isArray(raw) ? rest : raw, SETTINGS_RULES_SOURCE, { allowMode: true });
      return { ...set, protectedPaths: validateProtectedPaths(protectedPaths), error: null };
    } catch (e) {
      if (!(e instanceof PermissionRulesError)) throw e;
      this.report(e);
      return { mode: null, rules: [], protectedPaths: [], error: e };
    }
  }

  /** The mode in force for a thread (or the workspace default without one) and where it comes from. */
  mode(threadId?: string): { mode: PermissionMode; source: ModeSource } {
    const own = threadId ? threadModes(this.deps.store.db, threadId)?.permissionMode : null;
    if (own && isPermissionMode(own)) return { mode: this.clamped(threadId!, own), source: 'thread' };
    const fromSettings = this.settingsRules().mode;
    return fromSettings ? { mode: threadId ? this.clamped(threadId, fromSettings) : fromSettings, source: 'settings' } : { mode: 'ask', source: 'default' };
  }

  /** The thread's permission mode under its ceiling (./thread-ceiling.ts). */
  private clamped(threadId: string, mode: PermissionMode): PermissionMode {
    const workMode = threadModes(this.deps.store.db, threadId)?.workMode ?? 'act';
    return clampToCeiling(threadCeiling(this.deps.store, threadId), { permissionMode: mode, workMode }).permissionMode;
  }

  /** What a subagent spawned by this run of `parentThreadId` starts with: the parent's modes as its calls are decided, its rules, a ceiling within both. */
  childLimits(parentThreadId: string, parentRunId: string): ChildLimits {
    const ctx = this.context(parentThreadId, { runId: parentRunId });
    return childLimits(this.deps.store, parentThreadId, { permissionMode: ctx.mode, workMode: ctx.planMode ? 'plan' : 'act' });
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

  /** The agent-writable sources as they are now: the settings and the workspace file. */
  private sources(): PermissionSources {
    const s = this.settingsRules();
    const w = this.workspaceRules();
    return { settingsMode: s.mode, policy: this.deps.policy(), rules: [...s.rules, ...w.rules], protectedPaths: s.protectedPaths, broken: s.error ?? w.error };
  }

  /**
   * A turn starts: its permission sources are kept until `endTurn`. A subagent's turn keeps the
   * ones its parent's running turn started with (the parent cannot widen them through a child).
   */
  beginTurn(runId: string, threadId: string): void {
    if (this.turns.has(runId)) return;
    const parent = this.deps.store.getThread(threadId)?.parentThreadId ?? null;
    const parentTurn = parent === null ? undefined : [...this.turns.values()].find((t) => t.threadId === parent);
    if (this.turns.size >= MAX_TURN_SNAPSHOTS) this.turns.delete(this.turns.keys().next().value!);
    this.turns.set(runId, { threadId, sources: parentTurn?.sources ?? this.sources(), userAllowed: new Set(parentTurn?.userAllowed ?? []) });
  }

  endTurn(runId: string): void {
    this.turns.delete(runId);
  }

  /** Snapshots every turn at its start and forgets it at its end; returns the uninstall. */
  installTurnHooks(hooks: HookBus): () => void {
    const offStart = hooks.on('turnStart', (i) => this.beginTurn(i.runId, i.threadId), { name: 'permissions', order: TURN_SNAPSHOT_ORDER });
    const offEnd = hooks.on('turnEnd', (i) => this.endTurn(i.runId), { name: 'permissions' });
    return () => {
      offStart();
      offEnd();
    };
  }

  /** The user added a workspace allow rule ("Always allow"): running turns may use it at once. */
  noteUserAllowRule(rule: unknown): void {
    const [r] = validateRuleSet({ rules: [rule] }, WORKSPACE_RULES_FILE, { allowMode: false }).rules;
    if (r) for (const t of this.turns.values()) t.userAllowed.add(r.label);
  }

  /** The context of a call; of a turn's call (`runId`), narrowed from what the turn started with. */
  context(threadId: string | undefined, opts: { planMode?: boolean; runId?: string } = {}): PermissionContext {
    if (opts.runId && threadId) this.beginTurn(opts.runId, threadId);
    const turn = opts.runId ? this.turns.get(opts.runId) : undefined;
    const src = turn ? combineWithTurnStart(turn, this.sources()) : this.sources();
    const t = this.threadRules(threadId);
    const own = threadId ? threadModes(this.deps.store.db, threadId) : null;
    const modes = {
      permissionMode: own?.permissionMode && isPermissionMode(own.permissionMode) ? own.permissionMode : src.settingsMode ?? 'ask',
      workMode: (opts.planMode ?? own?.workMode === 'plan') ? 'plan' as const : 'act' as const,
    };
    // Every call of a subagent's thread is decided within the ceiling fixed when it was spawned.
    const m = threadId ? clampToCeiling(threadCeiling(this.deps.store, threadId), modes) : modes;
    return {
      mode: m.permissionMode,
      policy: src.policy,
      rules: [...src.rules, ...t.rules],
      broken: src.broken ?? t.error,
      planMode: m.workMode === 'plan',
      protectedPaths: src.protectedPaths,
    };
  }

  /** The decision for one call of a thread's run (`args`: the parsed arguments; `runId`: the turn, whose start rules hold). */
  decide(threadId: string, call: { toolName: string; toolClass: ToolClass; args: unknown; workspaceRoot?: string; runId?: string }): PermissionDecision {
    const root = call.workspaceRoot ?? this.deps.workspaceRoot;
    const ctx = this.context(threadId, call.runId ? { runId: call.runId } : {});
    return decidePermission(ctx, { toolName: call.toolName, toolClass: call.toolClass, args: call.args, paths: this.pathsOf(root, call.args), workspaceRoot: root });
  }

  /** The call's path argument relative to the workspace, and where it really leads when a symlink is on the way. */
  private pathsOf(root: string, args: unknown): string[] {
    const p = (args as { path?: unknown } | null)?.path;
    // The file tools read backslashes as separators on every platform (../tools/workspace-path.ts): so do the rules.
    const given = typeof p === 'string' ? p.replace(/\\/g, '/') : '.';
    const rel = relativeArgPath(root, given);
    if (rel === null) return [];
    const out = [rel];
    // Where the path really leads, links followed even when dangling (a link to .github/ is
    // .github/; a dangling link to .vscode/tasks.json creates it). A path the resolver refuses (a
    // link loop) is the file tool's to refuse; the rules judge its own name.
    try {
      const real = resolveRealPath(path.resolve(root, given), given);
      const r = relativeArgPath(fs.realpathSync(root), real);
      if (r !== null && r !== rel) out.push(r);
    } catch {
      // Unresolvable: only the given path.
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
      protectedPaths: [
        ...BUILTIN_PROTECTED_PATHS.map((p) => ({ path: p.glob, why: p.why, source: 'builtin' as const })),
        ...s.protectedPaths.map((p) => ({ path: p.glob, why: p.why, source: 'settings' as const })),
      ],
      rules: ([['settings', s.rules], ['workspace', w.rules], ['thread', t.rules]] as const).flatMap(([scope, list]) => list.map((r, index) => ({
        origin: r.origin, action: r.action, tool: r.tool, command: r.command?.text ?? null, path: r.path, reason: r.reason, label: r.label, scope, index,
      }))),
    };
  }
}
