/**
 * ContextService: the engine's context capability — @-mention suggestions (./suggest.ts), their
 * resolution into a prompt (./resolve.ts, ../../protocol/mentions.ts) and the estimate of how
 * much of the model's context window the next request would use (the composer's meter): the
 * same system prompt, history (../agent/history.ts) and tool definitions the runner will send,
 * plus the draft and its mentions, counted per provider family (../providers/token-count.ts)
 * against the model's window (../providers/context-windows.ts).
 */
import type { Mention, ResolvedMention } from '../../protocol/mentions';
import { formatContext } from '../../protocol/mentions';
import { ContextError } from './errors';
import type { CommandResult } from '../../protocol/commands/index';
import { buildHistory, DEFAULT_SYSTEM_PROMPT } from '../conversation/history';
import { TurnSalvage } from '../salvage/turn-salvage';
import { offeredTools, turnSystemPrompt } from '../plans/offer';
import { catalogThreshold, turnToolCatalog } from '../mcp-catalog/catalog';
import type { PlanService } from '../plans/service';
import type { Host } from '../host';
import { contextWindowOf } from '../providers/context-windows';
import type { ProviderRegistry } from '../providers/registry';
import { countPrompt, countSourceOf, countText } from '../providers/token-count';
import type { ChatMessage, ResolvedModel } from '../providers/types';
import type { VoxStore } from '../store/store';
import type { ToolRegistry } from '../tools/registry';
import { resolveMentions } from './resolve';
import { suggestMentions } from './suggest';
import { WorkspaceFiles } from './workspace-files';

export interface ContextServiceDeps {
  workspaceRoot: string;
  ripgrepPath?: string | undefined;
  store: VoxStore;
  providers: ProviderRegistry;
  tools: ToolRegistry;
  host: Host;
  systemPrompt?: string | undefined;
  /** Plan / Act of threads: the estimate counts the tools and system prompt the runner will send in the thread's mode. */
  plans?: PlanService;
  /** The turn's system prompt as the runner builds it ($variables resolved, ../rules/): the meter counts the same string. */
  systemPromptFor?: (threadId: string | null) => Promise<string>;
  /** Manual rules for the @-mention popup (../rules/). */
  manualRules?: () => Array<{ name: string; description: string | null }>;
  /** What the draft becomes with its rules (../rules/): the stripped prompt and the block the turn would get. */
  rulesFor?: (draft: string, contextPaths: string[], threadId: string | null) => Promise<{ prompt: string; block: string }>;
  /** MCP resources for @-mentions (../mcp/): the list offered, and one read. */
  mcp?: {
    resources(): Array<{ server: string; uri: string; name: string; description: string | null }>;
    read(server: string, uri: string): Promise<{ text: string; truncated: boolean; mimeType: string | null }>;
  };
}

export type ContextEstimate = CommandResult<'estimateContext'>;

export class ContextService {
  readonly files: WorkspaceFiles;

  constructor(private readonly deps: ContextServiceDeps) {
    this.files = new WorkspaceFiles(deps.workspaceRoot, deps.ripgrepPath);
  }

  suggest(query: string, limit?: number) {
    return suggestMentions({ files: this.files, store: this.deps.store, workspaceRoot: this.deps.workspaceRoot, ...(this.deps.manualRules ? { manualRules: this.deps.manualRules } : {}), ...(this.deps.mcp ? { mcpResources: () => this.deps.mcp!.resources() } : {}) }, query, limit);
  }

  /** Resolves mentions, sizing each with `model`'s counter (the approximation when no model is given). */
  resolve(mentions: readonly Mention[], model?: ResolvedModel): Promise<ResolvedMention[]> {
    const source = model ? countSourceOf(model) : 'approximation';
    return resolveMentions(
      { workspaceRoot: this.deps.workspaceRoot, files: this.files, store: this.deps.store, sources: this.deps.host.mentionSources, count: (t) => countText(source, t),
        ...(this.deps.mcp ? { readMcpResource: (server: string, uri: string) => this.deps.mcp!.read(server, uri) } : {}) },
      mentions,
    );
  }

  /**
   * The user message a prompt with mentions becomes (the prompt itself without any). `strict`: a
   * mention that cannot be attached is a `ContextError` (mentionNotAttached) naming each by index,
   * instead of a warning inside the message.
   */
  async promptWithMentions(prompt: string, mentions: readonly Mention[] | undefined, model?: ResolvedModel, strict = false): Promise<string> {
    if (!mentions || mentions.length === 0) return prompt;
    const resolved = await this.resolve(mentions, model);
    const bad = resolved.flatMap((r, index) => (r.chip.status === 'warning' ? [{ index, label: r.chip.label, warning: r.chip.warning ?? 'not attached' }] : []));
    if (strict && bad.length > 0) {
      throw new ContextError('mentionNotAttached', `Not sent: ${bad.map((b) => `${b.label} cannot be attached (${b.warning})`).join('; ')}.`, { mentions: bad });
    }
    return formatContext(prompt, resolved);
  }

  async estimate(p: { threadId: string | null; draft: string; mentions?: readonly Mention[] | undefined; model?: string | undefined }): Promise<ContextEstimate> {
    const { store, providers, host, tools } = this.deps;
    const ref = p.model ?? host.model();
    const model = await providers.resolve(ref);
    const source = countSourceOf(model);
    const known = p.threadId !== null && store.hasThread(p.threadId);
    // The tools the runner will send: above the catalog threshold, the built-ins and the 3 MCP meta-tools (../mcp-catalog/).
    const offered = turnToolCatalog(offeredTools(tools, this.deps.plans, known ? p.threadId! : ''), catalogThreshold(host.mcpSettings?.()?.toolCatalogThreshold)).offered;
    // A model without native tools is told the fence syntax in its system prompt (../salvage/), as the runner does.
    const systemPrompt = new TurnSalvage(offered, model.toolsEnabled).systemPrompt(this.deps.systemPromptFor
      ? await this.deps.systemPromptFor(known ? p.threadId! : null)
      : turnSystemPrompt(this.deps.plans, known ? p.threadId! : '', this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT));
    const history: ChatMessage[] = known ? buildHistory(store.activePath(p.threadId!), systemPrompt, (r) => store.steers(r), store.compactions(p.threadId!)) : buildHistory([], systemPrompt);
    const resolved = p.mentions && p.mentions.length > 0 ? await this.resolve(p.mentions, model) : [];
    // The rules the draft would get: its tokens stripped, the block counted with the prompt (as the runner sends it).
    const paths = (p.mentions ?? []).filter((m) => (m.kind === 'file' || m.kind === 'folder') && m.target).map((m) => m.target!);
    const ruled = this.deps.rulesFor && p.draft.length > 0 ? await this.deps.rulesFor(p.draft, paths, known ? p.threadId! : null) : { prompt: p.draft, block: '' };
    const withContext = formatContext(ruled.prompt, resolved);
    const content = ruled.block ? `${withContext}\n\n${ruled.block}` : withContext;
    const specs = model.toolsEnabled ? offered.map((t) => t.spec) : [];
    const messages: ChatMessage[] = p.draft.length > 0 || resolved.length > 0 ? [...history, { role: 'user', content }] : history;
    const [total, window] = await Promise.all([countPrompt(model, messages, specs), contextWindowOf(model)]);
    const system = history[0]?.content ?? '';
    const historyText = history.slice(1).map((m) => m.content).join('');
    const [systemTokens, historyTokens, toolTokens, promptTokens] = await Promise.all([
      countText(source, system), countText(source, historyText), specs.length > 0 ? countText(source, JSON.stringify(specs)) : 0, countText(source, ruled.block ? `${ruled.prompt}\n\n${ruled.block}` : ruled.prompt),
    ]);
    return {
      tokens: total.tokens,
      window: window.tokens,
      windowSource: window.source,
      source: total.source,
      fits: window.tokens === null || total.tokens <= window.tokens,
      model: ref,
      parts: { system: systemTokens, history: historyTokens, tools: toolTokens, prompt: promptTokens, mentions: resolved.reduce((n, r) => n + r.chip.tokens, 0) },
      mentions: resolved.map((r) => r.chip),
    };
  }
}
