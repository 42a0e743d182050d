/**
 * RulesService: the rules in force (SPEC 6.1) and the system prompt's $variables (SPEC 6.2). It
 * merges the user rules (the host's `vox.rules`), the workspace's `.vox/rules/*.md` and the peer
 * files (./files.ts) — a workspace rule overrides a user rule of the same name, both override a
 * peer file, and each override is reported —, applies the workspace's toggles, and answers what a
 * prompt gets (./extract.ts). The set is cached and reloaded when a watched folder changes
 * (debounced) or the host's settings change; its own writes reload it at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RuleListView, RuleView, RulesPreview } from '../../protocol/commands/rules';
import { DEFAULT_SYSTEM_PROMPT } from '../conversation/history';
import type { Host, RulesSettings } from '../host';
import { turnSystemPrompt } from '../plans/offer';
import type { PlanService } from '../plans/service';
import { splitContext } from '../../protocol/mentions';
import { RuleError } from './errors';
import { extractRules, formatRulesBlock } from './extract';
import { CLINERULES, DISABLED_FILE, WORKSPACE_RULES_DIR, loadPeerRules, loadWorkspaceRules, readDisabled, writeConfined, type RuleFileError } from './files';
import { formatRuleFile, parseUserRule, validateRuleName, SETTINGS_SOURCE, type Rule, type RuleAttach } from './parse';
import { resolveVariables, variableValues, type VariableValues } from './variables';

/** Wait after the last change in a watched folder before reloading (editors write in bursts). */
export const RULES_RELOAD_DEBOUNCE_MS = 150;
/** Most folders watched (root, .vox, .vox/rules, .clinerules). */
const MAX_WATCHED = 4;

export interface RulesServiceDeps {
  workspaceRoot: string;
  host: Host;
  plans?: PlanService;
  /** The base system prompt (default DEFAULT_SYSTEM_PROMPT). */
  systemPrompt?: string | undefined;
  /** Injected for tests: the clock, the user's locale and time zone. */
  now?: () => Date;
  locale?: string;
  timeZone?: string;
  /** Watch the rule folders (default true; tests of the pure paths turn it off). */
  watch?: boolean;
}

interface Loaded { rules: Array<Rule & { enabled: boolean; overrides: string | null }>; errors: RuleFileError[]; readPeerFiles: boolean }

export interface PreparedPrompt { prompt: string; names: string[]; block: string; warnings: string[] }

export class RulesService {
  private cache: Loaded | null = null;
  private readonly watchers = new Map<string, fs.FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly reported = new Set<string>();
  private readonly offSettings: () => void;

  constructor(private readonly deps: RulesServiceDeps) {
    this.offSettings = deps.host.onSettingsChange(() => this.invalidate());
    if (deps.watch !== false) this.arm();
  }

  /** Called (debounced) whenever the rules may have changed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  dispose(): void {
    this.offSettings();
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    this.listeners.clear();
  }

  private settings(): RulesSettings {
    return this.deps.host.rulesSettings?.() ?? {};
  }

  /** Watches the folders that exist now; a change re-arms (a new .vox/rules gets its watcher). */
  private arm(): void {
    const root = this.deps.workspaceRoot;
    for (const rel of ['', '.vox', WORKSPACE_RULES_DIR, CLINERULES]) {
      if (this.watchers.size >= MAX_WATCHED || this.watchers.has(rel)) continue;
      const dir = path.join(root, rel);
      try {
        if (!fs.lstatSync(dir).isDirectory()) continue;
        const w = fs.watch(dir, { persistent: false }, () => this.changed());
        w.on('error', () => {
          w.close();
          this.watchers.delete(rel);
        });
        this.watchers.set(rel, w);
      } catch {
        // absent (or unwatchable): the next change of its parent arms it
      }
    }
  }

  private changed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.arm();
      this.invalidate();
    }, RULES_RELOAD_DEBOUNCE_MS);
    this.timer.unref?.();
  }

  private invalidate(): void {
    this.cache = null;
    for (const l of [...this.listeners]) l();
  }

  private load(): Loaded {
    if (this.cache) return this.cache;
    const root = this.deps.workspaceRoot;
    const s = this.settings();
    const errors: RuleFileError[] = [];
    const user: Rule[] = [];
    if (s.rules !== undefined && s.rules !== null) {
      if (!Array.isArray(s.rules)) errors.push({ source: SETTINGS_SOURCE, line: null, code: 'rule/invalidRule', message: `${SETTINGS_SOURCE}: expected an array of rules` });
      else s.rules.forEach((raw, i) => {
        try {
          user.push(parseUserRule(raw, i));
        } catch (e) {
          if (!(e instanceof RuleError)) throw e;
          errors.push({ source: e.source ?? SETTINGS_SOURCE, line: e.line, code: `rule/${e.code}`, message: e.message });
        }
      });
    }
    const ws = loadWorkspaceRules(root);
    errors.push(...ws.errors);
    const readPeerFiles = s.readPeerFiles !== false;
    const peer = readPeerFiles ? loadPeerRules(root) : { rules: [], errors: [] };
    errors.push(...peer.errors);
    const disabled = readDisabled(root);
    if (disabled.error) errors.push(disabled.error);
    // Precedence: workspace > user > peer. Two files of one scope with one name: the second is an error.
    const byName = new Map<string, Rule & { enabled: boolean; overrides: string | null }>();
    for (const group of [ws.rules, user, peer.rules]) {
      const seen = new Set<string>();
      for (const r of group) {
        if (seen.has(r.name)) {
          errors.push({ source: r.source, line: null, code: 'rule/duplicateName', message: `${r.source}: another ${r.scope} rule is already named "${r.name}"; this one is skipped` });
          continue;
        }
        seen.add(r.name);
        const winner = byName.get(r.name);
        if (winner) {
          if (winner.overrides === null) winner.overrides = r.source;
          continue;
        }
        byName.set(r.name, { ...r, enabled: r.enabledInFile && !disabled.names.has(r.name), overrides: null });
      }
    }
    const rules = [...byName.values()];
    for (const r of rules) if (r.overrides) this.reportOnce(`Rule "${r.name}" of ${r.source} overrides the one of ${r.overrides}.`);
    for (const e of errors) this.reportOnce(e.message);
    this.cache = { rules, errors, readPeerFiles };
    return this.cache;
  }

  private reportOnce(message: string): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.deps.host.notify({ level: 'warning', source: 'rules', message });
  }

  /** The $variables' values for a thread (null: a new one). */
  async variables(threadId: string | null): Promise<VariableValues> {
    const root = this.deps.workspaceRoot;
    const opts = Intl.DateTimeFormat().resolvedOptions();
    return variableValues({
      now: this.deps.now?.() ?? new Date(),
      timeZone: this.deps.timeZone ?? opts.timeZone ?? 'UTC',
      locale: this.deps.locale ?? opts.locale ?? 'en-US',
      platform: `${process.platform}/${process.arch}`,
      workspaceRoot: path.basename(root),
      gitBranch: currentBranch(root),
      activeSpoke: threadId !== null && this.deps.plans?.workMode(threadId) === 'plan' ? 'planning' : 'coding',
    });
  }

  /** The system prompt of a turn: base, the user's addition, Plan-mode instructions, $variables resolved. */
  async systemPrompt(threadId: string | null): Promise<string> {
    const append = this.settings().systemPromptAppend?.trim();
    const base = `${this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT}${append ? `\n\n${append}` : ''}`;
    return resolveVariables(turnSystemPrompt(this.deps.plans, threadId ?? '', base), await this.variables(threadId));
  }

  private view(r: Loaded['rules'][number], values: VariableValues): RuleView {
    return {
      name: r.name, scope: r.scope, attach: r.attach, enabled: r.enabled, description: r.description, paths: r.paths, source: r.source,
      body: resolveVariables(r.body, values), overrides: r.overrides,
    };
  }

  async list(): Promise<RuleListView> {
    const l = this.load();
    const values = await this.variables(null);
    return { rules: l.rules.map((r) => this.view(r, values)), errors: l.errors, readPeerFiles: l.readPeerFiles };
  }

  private find(name: string): Loaded['rules'][number] {
    const r = this.load().rules.find((x) => x.name === name);
    if (!r) throw new RuleError('unknownRule', `There is no rule named "${name}".`);
    return r;
  }

  async get(name: string): Promise<RuleView> {
    return this.view(this.find(name), await this.variables(null));
  }

  /** Manual rule names for the @-mention popup (enabled ones). */
  manualRules(): Array<{ name: string; description: string | null; scope: Rule['scope'] }> {
    return this.load().rules.filter((r) => r.enabled && r.attach === 'manual').map((r) => ({ name: r.name, description: r.description, scope: r.scope }));
  }

  async create(p: { scope: 'user' | 'workspace'; name: string; attach: RuleAttach; body: string; description?: string | undefined; paths?: string[] | undefined }): Promise<RuleView> {
    const n = validateRuleName(p.name);
    const clash = this.load().rules.find((r) => r.name === n && r.scope !== 'peer');
    if (clash) throw new RuleError('duplicateName', `A rule named "${n}" already exists (${clash.source}).`);
    const fields = { name: n, attach: p.attach, body: p.body, description: p.description ?? null, paths: p.paths ?? [] };
    if (p.scope === 'workspace') writeConfined(this.deps.workspaceRoot, `${WORKSPACE_RULES_DIR}/${n}.md`, formatRuleFile(fields));
    else await this.writeUser((list) => [...list, { name: n, attach: p.attach, body: p.body, ...(p.description ? { description: p.description } : {}), ...(p.paths?.length ? { paths: p.paths } : {}) }]);
    this.invalidate();
    return this.get(n);
  }

  async update(name: string, patch: { attach?: RuleAttach | undefined; body?: string | undefined; description?: string | null | undefined; paths?: string[] | undefined }): Promise<RuleView> {
    const r = this.find(validateRuleName(name));
    if (r.scope === 'peer') throw new RuleError('notSupported', `"${name}" is read from ${r.source}; edit that file instead.`, r.source);
    const next = {
      name: r.name, attach: patch.attach ?? r.attach, body: patch.body ?? r.body,
      description: patch.description === undefined ? r.description : patch.description, paths: patch.paths ?? r.paths, enabledInFile: r.enabledInFile,
    };
    if (r.scope === 'workspace') writeConfined(this.deps.workspaceRoot, r.source, formatRuleFile(next));
    else {
      await this.writeUser((list) => list.map((raw) => {
        if ((raw as { name?: unknown })?.name !== r.name) return raw;
        return { ...(raw as object), attach: next.attach, body: next.body, description: next.description ?? undefined, paths: next.paths.length ? next.paths : undefined };
      }));
    }
    this.invalidate();
    return this.get(r.name);
  }

  async setEnabled(name: string, enabled: boolean): Promise<RuleView> {
    const r = this.find(validateRuleName(name));
    const current = readDisabled(this.deps.workspaceRoot).names;
    if (enabled) current.delete(r.name);
    else current.add(r.name);
    writeConfined(this.deps.workspaceRoot, DISABLED_FILE, `${JSON.stringify({ disabled: [...current].sort() }, null, 2)}\n`);
    if (enabled && !r.enabledInFile && r.scope === 'workspace') writeConfined(this.deps.workspaceRoot, r.source, formatRuleFile({ ...r, enabledInFile: true }));
    this.invalidate();
    return this.get(r.name);
  }

  private async writeUser(edit: (list: unknown[]) => unknown[]): Promise<void> {
    const set = this.deps.host.setUserRules;
    if (!set) throw new RuleError('notSupported', 'This host keeps no user rules (they live in VS Code\'s vox.rules setting); create a workspace rule instead.');
    const raw = this.settings().rules;
    await set.call(this.deps.host, edit(Array.isArray(raw) ? raw : []));
  }

  /**
   * What a prompt gets: manual tokens stripped, the block of every attached rule ($variables
   * resolved in the bodies), and warnings. `contextPaths`: files and folders of its mentions.
   */
  async prepare(prompt: string, contextPaths: readonly string[], threadId: string | null, knownLabels: readonly string[] = []): Promise<PreparedPrompt> {
    return (await this.preparer(threadId))(prompt, contextPaths, knownLabels);
  }

  /**
   * A synchronous `prepare` for this thread (the rules and the $variables' values read now), for
   * a caller that must run inside a store transaction: a queued prompt is prepared as it starts.
   */
  async preparer(threadId: string | null): Promise<(prompt: string, contextPaths: readonly string[], knownLabels?: readonly string[]) => PreparedPrompt> {
    const l = this.load();
    const values = l.rules.length > 0 ? await this.variables(threadId) : null;
    const root = this.deps.workspaceRoot;
    return (prompt, contextPaths, knownLabels = []) => {
      const labels = new Set(knownLabels.flatMap((x) => [x, path.basename(x)]));
      const ex = extractRules({
        prompt, rules: l.rules, contextPaths,
        isKnownMention: (w) => labels.has(w) || fs.existsSync(path.join(root, w)),
      });
      const block = formatRulesBlock(ex.rules.map((r) => ({ name: r.name, body: resolveVariables(r.body, values!) })));
      return { prompt: ex.prompt, names: ex.rules.map((r) => r.name), block, warnings: ex.warnings };
    };
  }

  /**
   * The same for a stored user message (a queued prompt: the prompt, then maybe its context
   * block): only the prompt part is searched for tokens; its file and folder chips are the context.
   */
  async storedPreparer(threadId: string): Promise<(stored: string) => PreparedPrompt> {
    const prep = await this.preparer(threadId);
    return (stored) => {
      const { prompt, chips } = splitContext(stored);
      const paths = chips.filter((c) => (c.kind === 'file' || c.kind === 'folder') && c.target !== null).map((c) => c.target!);
      const p = prep(prompt, paths, paths);
      return { ...p, prompt: `${p.prompt}${stored.slice(prompt.length)}` };
    };
  }

  /**
   * The block of the named rules as they read now, for a regenerate or retry that re-attaches the
   * rules its run's posture recorded (SPEC 6.3: same posture). Names no longer defined or now
   * disabled are left out (and so not recorded again).
   */
  async blockFor(threadId: string, names: readonly string[]): Promise<{ names: string[]; block: string }> {
    const wanted = new Set(names.map((n) => n.toLowerCase()));
    const rules = this.load().rules.filter((r) => r.enabled && wanted.has(r.name.toLowerCase()));
    if (rules.length === 0) return { names: [], block: '' };
    const values = await this.variables(threadId);
    return { names: rules.map((r) => r.name), block: formatRulesBlock(rules.map((r) => ({ name: r.name, body: resolveVariables(r.body, values) }))) };
  }

  async preview(prompt: string, contextPaths: readonly string[]): Promise<RulesPreview> {
    const p = await this.prepare(prompt, contextPaths, null);
    return { prompt: p.prompt, rules: p.names, block: p.block, warnings: p.warnings };
  }
}

/** Most folders walked up from the workspace looking for its repository. */
const MAX_REPO_DEPTH = 64;

/**
 * The current branch, read from the repository's HEAD file (no git process: this runs before
 * every turn): the branch name, 'HEAD' when detached, '' outside a repository. A linked worktree's
 * `.git` file (`gitdir: …`) is followed.
 */
export function currentBranch(cwd: string): string {
  let dir = path.resolve(cwd);
  for (let i = 0; i < MAX_REPO_DEPTH; i++) {
    const dotGit = path.join(dir, '.git');
    try {
      const st = fs.statSync(dotGit);
      let gitDir = dotGit;
      if (st.isFile()) {
        const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
        if (!m) return '';
        gitDir = path.resolve(dir, m[1]!.trim());
      }
      const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
      const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
      return ref ? ref[1]! : 'HEAD';
    } catch {
      // no .git here (or unreadable): look further up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '';
    dir = parent;
  }
  return '';
}
