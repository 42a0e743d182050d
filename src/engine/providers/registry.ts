/**
 * Model references and the providers behind them. A ref is `provider:model` as users write it in
 * settings and on the CLI; the registry parses it with clear errors and resolves it through the
 * factory registered for its provider kind. Keys are asked of the host (VS Code SecretStorage, or
 * the environment for the CLI) at resolve time and never stored; endpoints likewise come from the
 * host's settings at resolve time, so changing a key or a base URL needs no engine restart.
 *
 *   local:demo                 the generated offline demo model (no tools: it writes nonsense)
 *   local:/path/to/model.gguf  any GGUF, run in process by node-llama-cpp (tools via JSON grammar)
 *   openai:<model>             OpenAI or any OpenAI-compatible server (`openaiBaseUrl`)
 *   ollama:<model>             Ollama's OpenAI-compatible endpoint (`ollamaBaseUrl`)
 *   openrouter:<model>         OpenRouter (`openrouterBaseUrl`, key `openrouterApiKey`)
 *   lmstudio:<model>           LM Studio's local server (`lmstudioBaseUrl`)
 *   compat:<endpoint>/<model>  one of the named OpenAI-compatible endpoints (`compatEndpoints`, key `compatApiKey:<endpoint>`)
 *   compat:<model>             the first of them (or the older single `compatBaseUrl`, key `compatApiKey`)
 *   anthropic:<model>          Anthropic Messages API
 *   vscode-lm:<id or family>   VS Code's Language Model API (registered by the extension)
 */
import { ProviderError, type ResolvedModel } from './types';

export const DEFAULT_MODEL_REF = 'local:demo';

export interface ModelRef { kind: string; model: string }

/** Secrets a provider may ask the host for (never stored by the engine). */
export type ProviderSecret = FixedProviderSecret | CompatEndpointSecret;
/** The secrets with one fixed name each. */
export type FixedProviderSecret = 'openaiApiKey' | 'anthropicApiKey' | 'openrouterApiKey' | 'compatApiKey';
/** The key of one named OpenAI-compatible endpoint (`compatApiKey:<endpoint name>`). */
export type CompatEndpointSecret = `compatApiKey:${string}`;

/** Endpoints from the host's settings; empty means the provider's default. */
export interface ProviderSettings {
  openaiBaseUrl?: string;
  anthropicBaseUrl?: string;
  ollamaBaseUrl?: string;
  openrouterBaseUrl?: string;
  lmstudioBaseUrl?: string;
  /** The older single server of `compat:` refs; migrated to `compatEndpoints` by the editor host. */
  compatBaseUrl?: string;
  /** Named OpenAI-compatible endpoints, side by side (raw: validated by ../connect/compat-endpoints.ts). */
  compatEndpoints?: unknown;
}

/** What a factory may ask while resolving. */
export interface ProviderContext {
  secret(name: ProviderSecret): Promise<string | undefined>;
  settings(): ProviderSettings;
}

export interface ProviderFactory {
  /** The `provider` part of refs it serves. */
  readonly kind: string;
  resolve(model: string, ref: string, ctx: ProviderContext): Promise<ResolvedModel> | ResolvedModel;
  /** Frees what the factory keeps (a loaded local model). */
  dispose?(): Promise<void> | void;
}

export class ProviderRegistry {
  private readonly factories = new Map<string, ProviderFactory>();

  constructor(private readonly ctx: ProviderContext) {}

  /** Adds a factory for its kind; the first registered for a kind wins (hosts register before the built-ins). */
  register(factory: ProviderFactory): boolean {
    if (this.factories.has(factory.kind)) return false;
    this.factories.set(factory.kind, factory);
    return true;
  }

  kinds(): string[] {
    return [...this.factories.keys()];
  }

  /** Parses `provider:model`; an unknown provider or a malformed ref is `provider/badRequest`. */
  parse(ref: string): ModelRef {
    const i = ref.indexOf(':');
    const kinds = this.kinds().join(', ');
    if (i <= 0 || i === ref.length - 1) {
      throw new ProviderError('badRequest', `Model "${ref}" is not of the form provider:model (providers: ${kinds}; e.g. local:demo, openai:gpt-4o-mini).`);
    }
    const kind = ref.slice(0, i);
    if (!this.factories.has(kind)) throw new ProviderError('badRequest', `Unknown provider "${kind}" in "${ref}"; use one of ${kinds}.`);
    return { kind, model: ref.slice(i + 1) };
  }

  async resolve(ref: string): Promise<ResolvedModel> {
    const { kind, model } = this.parse(ref);
    return this.factories.get(kind)!.resolve(model, ref, this.ctx);
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.factories.values()].map((f) => f.dispose?.()));
  }
}
