/**
 * Engine wiring: one object that owns the store, the turn stream registry (persisting chunks
 * to the store and replaying evicted ones from it), the tools, the approval policy and gate,
 * the model resolver and the agent runner. The CLI and the VS Code extension both build this.
 */
import { ApprovalGate, ApprovalPolicy } from './approvals/approval';
import { AgentRunner } from './agent/runner';
import { createDefaultTools } from './tools/index';
import { ModelResolver, type ProviderConfig } from './providers/resolve';
import { VoxStore } from './store/store';
import { TurnStreamRegistry } from './stream/turn-stream-registry';
import { CheckpointService } from './checkpoints/service';
import { VariantPool } from './variants/pool';

export interface EngineOptions {
  dbPath: string;
  workspaceRoot: string;
  providers: ProviderConfig;
  policy?: ApprovalPolicy;
  /** Automatic checkpoints before mutating tools and at turn end (default on; off when the workspace is not a git repo). */
  checkpoints?: boolean;
}

export class Engine {
  readonly store: VoxStore;
  readonly streams: TurnStreamRegistry;
  readonly gate = new ApprovalGate();
  readonly policy: ApprovalPolicy;
  readonly models: ModelResolver;
  readonly runner: AgentRunner;
  readonly checkpoints: CheckpointService;
  /** Parallel variants of one prompt in managed worktrees (SPEC 4.3). */
  readonly variants: VariantPool;
  readonly workspaceRoot: string;
  /** Run ids found interrupted (owner process gone) when the engine opened the store. */
  readonly recovered: string[];

  constructor(opts: EngineOptions) {
    this.store = VoxStore.open(opts.dbPath);
    this.recovered = this.store.recoverInterrupted();
    this.streams = new TurnStreamRegistry({
      persist: (c) => this.store.persistChunk(c),
      loadAfter: (turnId, afterSeq) => this.store.chunksAfter(turnId, afterSeq),
    });
    this.policy = opts.policy ?? new ApprovalPolicy();
    this.models = new ModelResolver(opts.providers);
    this.workspaceRoot = opts.workspaceRoot;
    this.checkpoints = new CheckpointService(this.store, opts.workspaceRoot);
    this.variants = VariantPool.forEngine(this);
    const auto = opts.checkpoints !== false;
    this.runner = new AgentRunner({
      store: this.store,
      streams: this.streams,
      tools: createDefaultTools(),
      policy: this.policy,
      gate: this.gate,
      workspaceRoot: opts.workspaceRoot,
      ...(auto
        ? {
            beforeMutatingTool: (info) => this.checkpoints.beforeMutatingTool(info),
            afterMutatingTool: (info) => this.checkpoints.afterMutatingTool(info),
            onTurnStart: () => this.checkpoints.prepare(),
            onTurnEnd: (info) => this.checkpoints.onTurnEnd(info),
          }
        : {}),
    });
  }

  async dispose(): Promise<void> {
    await this.variants.cancelAll();
    this.runner.cancelAll();
    await this.checkpoints.settle();
    await this.models.dispose();
    this.store.close();
  }
}
