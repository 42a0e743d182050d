/**
 * The engine's services, as the composition root (./engine.ts) builds them and the protocol
 * handlers (./session/handlers/) use them. Nothing outside the engine sees this object: clients
 * reach every capability through protocol commands.
 */
import type { ApprovalGate, ApprovalPolicy } from './approvals/approval';
import type { HookBus } from './agent/hooks';
import type { CheckpointService } from './checkpoints/service';
import type { ContextService } from './context/service';
import type { Host } from './host';
import type { ProviderRegistry } from './providers/registry';
import type { RunRegistry } from './runs/registry';
import type { ThreadRunQueue } from './runs/queue';
import type { RateLimitWaits } from './runs/rate-limit';
import type { VoxStore } from './store/store';
import type { TurnStreamRegistry } from './stream/turn-stream-registry';
import type { ToolRegistry } from './tools/registry';
import type { VariantPool } from './variants/pool';
import type { PermissionService } from './permissions/service';
import type { PlanService } from './plans/service';
import type { ReviewService } from './review/service';
import type { RulesService } from './rules/service';
import type { McpManager } from './mcp/manager';
import type { CommandSpec, CommandType } from '../protocol/commands/index';
import type { ModuleHandler } from './module';

export interface EngineServices {
  readonly workspaceRoot: string;
  readonly host: Host;
  readonly store: VoxStore;
  readonly streams: TurnStreamRegistry;
  readonly providers: ProviderRegistry;
  readonly tools: ToolRegistry;
  readonly hooks: HookBus;
  readonly gate: ApprovalGate;
  /** The approval policy from the host's settings, now. */
  policy(): ApprovalPolicy;
  readonly runs: RunRegistry;
  readonly queue: ThreadRunQueue;
  readonly waits: RateLimitWaits;
  readonly checkpoints: CheckpointService;
  readonly variants: VariantPool;
  /** Permission modes and rules: the decision per tool call, the effective rules (./permissions/). */
  readonly permissions: PermissionService;
  /** Plan / Act per thread and the thread's plan (./plans/). */
  readonly plans: PlanService;
  /** What a turn changed, per file and hunk, and Keep / Undo of each (review/). */
  readonly review: ReviewService;
  /** @-mentions and the context meter (context/). */
  readonly context: ContextService;
  /** Rules and the system prompt's $variables (rules/). */
  readonly rules: RulesService;
  /** Vox's MCP servers: connections, their tools in `tools`, resources and prompts (mcp/). */
  readonly mcp: McpManager;
  /** What the capability modules provide (./modules.ts), by name, beside the core services above. */
  readonly modules: Readonly<Record<string, unknown>>;
  /** The handler of every command (derived from the modules; ./module.ts). */
  readonly handlers: ReadonlyMap<string, ModuleHandler<CommandType, never>>;
  /** The spec of every command: the protocol's table and the modules' own (./module.ts). */
  readonly commands: ReadonlyMap<string, CommandSpec>;
}
