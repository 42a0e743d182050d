/**
 * VariantPool (SPEC §4.3): the entry point that validates a variants request and
 * starts it as a `VariantGroup` (./group). One pool per engine; it keeps the groups it
 * started until they end, so clients (the "Vox Variants" view) can list and watch them
 * (`onDidChange`: a group started, changed or ended).
 *
 * `startVariants` checks everything before it changes anything — 1..MAX_VARIANTS model refs, each
 * resolvable (`invalidModels` lists every bad one with its reason; more than MAX_VARIANTS is
 * `tooManyVariants`), a non-empty prompt, a git work tree (`notARepository`) with a commit to start
 * from (`noCommits`), no leftover worktree or thread under the ids it is about to use
 * (`alreadyExists`) — then records one child thread per variant and returns the group with every
 * variant `creating`; worktrees are created and agent loops started in parallel from there.
 *
 * Ids are deterministic: the pool id is given or allocated (`variants:<uuid>`); variant i's thread is
 * `deriveSubagentFromTask(parentThreadId ?? poolId, "<poolId>/variant-<i>")`; its worktree is the
 * pool-family worktree `.vox/worktrees/muse/<slug of parentThreadId ?? poolId>/variant-<i>`
 * (`variantLocation`).
 * Every variant starts from the main workspace's HEAD commit at the time of the request; the
 * user's uncommitted edits are not copied into the variants (they stay in the main tree, where
 * adoption applies the variant's patch on top of them).
 */
import * as fs from 'node:fs';
import { quoteLine } from '../../protocol/wire/quote';
import { redact } from '../platform/secrets';
import { checkFanOut } from '../ledger/fan-out';
import * as path from 'node:path';
import type { ResolvedModel } from '../providers/types';
import { allocate, deriveSubagentFromTask } from '../ids/ids';
import type { VoxStore } from '../store/store';
import { gitRaw } from '../git/git';
import { WorktreeError, managedWorktreePath, resolveRepository, slugify, type ManagedWorktreeLocation } from '../worktrees/worktrees';
import { VariantGroup, type VariantPlan, type VariantRunnerDeps } from './group';
import { MAX_VARIANTS, MIN_VARIANTS, VARIANT_GIT_TIMEOUT_MS, VARIANT_TITLE_PROMPT_CHARS, VariantError } from './types';

export interface VariantPoolDeps extends VariantRunnerDeps {
  store: VoxStore;
  /** Turns a model ref into a provider; rejects (typed) for a bad or unusable ref. */
  resolveModel: (ref: string) => Promise<ResolvedModel>;
}

/** The worktree of variant `index` of the pool owned by `owner` (a thread id or the pool id). */
export function variantLocation(owner: string, index: number): ManagedWorktreeLocation {
  if (!Number.isInteger(index) || index < 0) throw new WorktreeError('invalidSlug', `variant index ${index} is not a non-negative integer`);
  return { family: 'pool', group: slugify(owner, 'thread'), slug: `variant-${index}` };
}

export interface StartVariantsOptions {
  /** Any directory inside the main workspace's git work tree. */
  repoRoot: string;
  prompt: string;
  /** 1..MAX_VARIANTS model refs, one variant each (the same ref may repeat). */
  models: readonly string[];
  /** The thread the variants branch from (their threads derive from it); none for a fresh pool. */
  parentThreadId?: string;
  /** Pool id for deterministic replays; default a fresh `variants:<uuid>`. */
  poolId?: string;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class VariantPool {
  private readonly groups = new Map<string, VariantGroup>();
  /** `<repoRoot>\0<worktree group>` of every group started here and not ended: one pool per thread. */
  private readonly owners = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: VariantPoolDeps) {}

  /** Called when a group starts, when any variant's status or stats change, and when a group ends. */
  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (e) {
        (this.deps.onListenerError ?? console.error)(e);
      }
    }
  }

  /** Validates, records the variant threads and starts the group; see the file header. */
  async startVariants(opts: StartVariantsOptions): Promise<VariantGroup> {
    const models = this.checkModelCount(opts.models);
    if (typeof opts.prompt !== 'string' || opts.prompt.trim().length === 0) throw new VariantError('invalidPrompt', 'the prompt for the variants is empty');
    const resolved = await this.resolveModels(models);
    // The cost ledger's gate, for the whole fan-out, before anything is created or sent.
    await checkFanOut(this.deps.store.db, { models: resolved, prompt: opts.prompt, threadId: opts.parentThreadId ?? null, what: `these ${resolved.length} variants' first calls` });

    let repoRoot: string;
    try {
      repoRoot = (await resolveRepository(opts.repoRoot)).root;
    } catch (e) {
      const code = e instanceof WorktreeError && e.code === 'notARepository' ? 'notARepository' : 'gitFailed';
      throw new VariantError(code, `variants need a git repository: ${describe(e)}`, { path: opts.repoRoot, cause: e });
    }
    const head = await gitRaw(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: repoRoot, okExitCodes: [1, 128], timeoutMs: VARIANT_GIT_TIMEOUT_MS });
    const base = head.stdout.toString('utf8').trim();
    if (head.exitCode !== 0 || !base) {
      throw new VariantError('noCommits', `${repoRoot} has no commits yet: variants start from a commit (make a first commit)`, { path: repoRoot });
    }

    const poolId = opts.poolId ?? allocate('variants');
    const owner = opts.parentThreadId ?? poolId;
    if (opts.parentThreadId !== undefined) this.assertThread(opts.parentThreadId);
    const plans: VariantPlan[] = models.map((model, index) => {
      const loc = variantLocation(owner, index);
      return {
        index, model, resolved: resolved[index]!, group: loc.group, slug: loc.slug,
        threadId: deriveSubagentFromTask(owner, `${poolId}/variant-${index}`),
        worktreePath: managedWorktreePath(repoRoot, loc),
      };
    });
    const ownerKey = `${repoRoot}\0${plans[0]!.group}`;
    if (this.owners.has(ownerKey)) {
      throw new VariantError('alreadyExists', `variants of ${owner} are already running; adopt or discard them first`, { path: path.dirname(plans[0]!.worktreePath) });
    }
    for (const p of plans) {
      if (fs.existsSync(p.worktreePath)) {
        throw new VariantError('alreadyExists', `${p.worktreePath} already exists (a variant pool of this thread is still there); adopt or discard it first`, { path: p.worktreePath, index: p.index });
      }
      if (this.threadExists(p.threadId)) throw new VariantError('alreadyExists', `thread ${p.threadId} already exists (pool id ${poolId} was used before)`, { index: p.index });
    }

    const n = plans.length;
    const title = (p: VariantPlan) => `Variant ${p.index + 1}/${n} (${p.model}): ${quoteLine(redact(opts.prompt), VARIANT_TITLE_PROMPT_CHARS)}`;
    // The variants' threads are children (listed under their parent, not in the top-level list):
    // of the thread they were started from, or else of a thread made for the group, so a pool
    // started from the palette or the CLI is one row in the thread list, not n.
    const groupThread = opts.parentThreadId === undefined ? allocate('thread') : undefined;
    const parentThreadId = opts.parentThreadId ?? groupThread!;
    this.deps.store.append(
      ...(groupThread ? [{ type: 'thread.created' as const, threadId: groupThread, title: variantGroupTitle(n, opts.prompt) }] : []),
      ...plans.map((p) => ({ type: 'thread.created' as const, threadId: p.threadId, title: title(p), parentThreadId })),
    );

    const group = new VariantGroup({ poolId, repoRoot, base, prompt: opts.prompt, plans, deps: this.deps });
    this.groups.set(poolId, group);
    this.owners.add(ownerKey);
    const forget = () => {
      if (group.variants.every((v) => v.status === 'adopted' || v.status === 'discarded')) {
        this.groups.delete(poolId);
        this.owners.delete(ownerKey);
      }
      this.changed();
    };
    group.onDidChange(forget);
    this.changed();
    return group;
  }

  /** The groups started by this pool that still have variants (not all adopted/discarded). */
  list(): VariantGroup[] {
    return [...this.groups.values()];
  }

  get(poolId: string): VariantGroup | undefined {
    return this.groups.get(poolId);
  }

  /** Stops every agent loop of every group (worktrees stay). */
  async cancelAll(): Promise<void> {
    await Promise.all([...this.groups.values()].map((g) => g.cancelAll()));
  }

  private checkModelCount(models: readonly string[]): string[] {
    if (!Array.isArray(models) || models.length < MIN_VARIANTS) {
      throw new VariantError('invalidModels', `give ${MIN_VARIANTS} to ${MAX_VARIANTS} model refs, one per variant (got ${Array.isArray(models) ? models.length : 'none'})`);
    }
    if (models.length > MAX_VARIANTS) {
      throw new VariantError('tooManyVariants', `at most ${MAX_VARIANTS} variants can run at once (got ${models.length} models)`);
    }
    return [...models];
  }

  private async resolveModels(models: string[]): Promise<ResolvedModel[]> {
    const problems: Array<{ index: number; ref: string; message: string }> = [];
    const out = await Promise.all(
      models.map(async (ref, index) => {
        if (typeof ref !== 'string' || ref.trim() === '') {
          problems.push({ index, ref: String(ref), message: 'the model ref is empty' });
          return undefined;
        }
        try {
          return await this.deps.resolveModel(ref);
        } catch (e) {
          problems.push({ index, ref, message: describe(e) });
          return undefined;
        }
      }),
    );
    if (problems.length > 0) {
      problems.sort((a, b) => a.index - b.index);
      const list = problems.map((p) => `#${p.index} ${JSON.stringify(p.ref)}: ${p.message}`).join('; ');
      throw new VariantError('invalidModels', `cannot use ${problems.length === 1 ? 'this model' : 'these models'} for variants — ${list}`, { models: problems });
    }
    return out as ResolvedModel[];
  }

  private threadExists(threadId: string): boolean {
    return this.deps.store.hasThread(threadId);
  }

  private assertThread(threadId: string): void {
    if (!this.threadExists(threadId)) throw new VariantError('unknownThread', `parent thread ${threadId} does not exist`);
  }
}

/** The group thread's title: `Variants (n): ` and the prompt's start (redacted before it is cut: a cut secret no longer matches its rule). */
export function variantGroupTitle(n: number, prompt: string): string {
  return `Variants (${n}): ${quoteLine(redact(prompt), VARIANT_TITLE_PROMPT_CHARS)}`;
}
