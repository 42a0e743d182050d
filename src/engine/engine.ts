/**
 * Engine wiring: one object that owns the store, the turn stream registry (persisting chunks
 * to the store and replaying evicted ones from it), the tools, the approval policy and gate,
 * the model resolver and the agent runner. The CLI and the VS Code extension both build this.
 */
import { ApprovalGate, ApprovalPolicy } from './agent/approval';
import { AgentRunner, type AgentRunnerDeps } from './agent/runner';
import { createDefaultTools } from './agent/tools/index';
import { ModelResolver, type ProviderConfig } from './providers/resolve';
import { VoxStore } from './store/store';
import { TurnStreamRegistry } from './stream/turn-stream-registry';

export interface EngineOptions {
  dbPath: string;
  workspaceRoot: string;
  providers: ProviderConfig;
  policy?: ApprovalPolicy;
  hooks?: Pick<AgentRunnerDeps, 'beforeMutatingTool' | 'onTurnEnd'>;
}

export class Engine {
  readonly store: VoxStore;
  readonly streams: TurnStreamRegistry;
  readonly gate = new ApprovalGate();
  readonly policy: ApprovalPolicy;
  readonly models: ModelResolver;
  readonly runner: AgentRunner;
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
    this.runner = new AgentRunner({
      store: this.store,
      streams: this.streams,
      tools: createDefaultTools(),
      policy: this.policy,
      gate: this.gate,
      workspaceRoot: opts.workspaceRoot,
      ...opts.hooks,
    });
  }

  async dispose(): Promise<void> {
    this.runner.cancelAll();
    await this.models.dispose();
    this.store.close();
  }
}
