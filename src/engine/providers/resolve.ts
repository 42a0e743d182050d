/**
 * Model references: `provider:model` strings as users write them in settings and on the CLI,
 * parsed with clear errors and resolved to a provider instance. Keys come from the caller (VS
 * Code SecretStorage or the OS environment for the CLI), never from settings.
 *
 *   local:demo                 the generated offline demo model (no tools: it writes nonsense)
 *   local:/path/to/model.gguf  any GGUF, run in process by node-llama-cpp (tools via JSON grammar)
 *   openai:<model>             OpenAI or any OpenAI-compatible server (`openaiBaseUrl`)
 *   ollama:<model>             Ollama's OpenAI-compatible endpoint (`ollamaBaseUrl`)
 *   anthropic:<model>          Anthropic Messages API
 *   vscode-lm:<id or family>   VS Code's Language Model API (provided by the extension)
 */
import { AnthropicProvider } from './anthropic';
import { LocalLlamaProvider } from './local-llama';
import { OpenAICompatibleProvider } from './openai';
import type { ModelProvider } from './types';
import { ProviderError } from './types';
import type { ResolvedModel } from '../agent/runner';

export const DEFAULT_MODEL_REF = 'local:demo';
/** Ollama's default local OpenAI-compatible endpoint. */
export const DEFAULT_OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';
/** Threads for in-process llama.cpp: 1 is fastest on small (2-core) machines under load. */
export const DEFAULT_LOCAL_THREADS = 1;

export type ProviderKind = 'local' | 'openai' | 'ollama' | 'anthropic' | 'vscode-lm';
const KINDS: readonly ProviderKind[] = ['local', 'openai', 'ollama', 'anthropic', 'vscode-lm'];

export interface ModelRef { kind: ProviderKind; model: string }

export interface ProviderConfig {
  demoModelPath: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  ollamaBaseUrl?: string;
  localThreads?: number;
  /** Providers supplied by the host (the extension adds `vscode-lm`). */
  extraProviders?: Partial<Record<ProviderKind, ModelProvider>>;
}

export function parseModelRef(ref: string): ModelRef {
  const i = ref.indexOf(':');
  if (i <= 0 || i === ref.length - 1) {
    throw new ProviderError('badRequest', `Model "${ref}" is not of the form provider:model (providers: ${KINDS.join(', ')}; e.g. local:demo, openai:gpt-4o-mini).`);
  }
  const kind = ref.slice(0, i) as ProviderKind;
  if (!KINDS.includes(kind)) throw new ProviderError('badRequest', `Unknown provider "${ref.slice(0, i)}" in "${ref}"; use one of ${KINDS.join(', ')}.`);
  return { kind, model: ref.slice(i + 1) };
}

/** Caches provider instances so a local model is loaded once per process. */
export class ModelResolver {
  private local: LocalLlamaProvider | undefined;
  constructor(private readonly config: ProviderConfig) {}

  resolve(ref: string): ResolvedModel {
    const { kind, model } = parseModelRef(ref);
    const extra = this.config.extraProviders?.[kind];
    if (extra) return { provider: extra, model, label: ref, toolsEnabled: true };
    if (kind === 'vscode-lm') throw new ProviderError('notSupported', 'VS Code language models are only available inside VS Code.');
    if (kind === 'local') {
      const isDemo = model === 'demo';
      return { provider: this.localProvider(), model: isDemo ? this.config.demoModelPath : model, label: ref, toolsEnabled: !isDemo };
    }
    if (kind === 'anthropic') {
      if (!this.config.anthropicApiKey) throw new ProviderError('auth', 'No Anthropic API key is set (VS Code: "Vox: Set API Key"; CLI: ANTHROPIC_API_KEY).');
      return { provider: new AnthropicProvider({ apiKey: this.config.anthropicApiKey, baseURL: this.config.anthropicBaseUrl }), model, label: ref, toolsEnabled: true };
    }
    const provider: ModelProvider =
      kind === 'ollama'
        ? new OpenAICompatibleProvider({ apiKey: 'ollama', baseURL: this.config.ollamaBaseUrl ?? DEFAULT_OLLAMA_BASE_URL })
        : this.openai();
    return { provider, model, label: ref, toolsEnabled: true };
  }

  private openai(): ModelProvider {
    if (!this.config.openaiApiKey && !this.config.openaiBaseUrl) {
      throw new ProviderError('auth', 'No OpenAI API key is set (VS Code: "Vox: Set API Key"; CLI: OPENAI_API_KEY), and no OpenAI-compatible base URL.');
    }
    return new OpenAICompatibleProvider({ apiKey: this.config.openaiApiKey ?? 'not-needed', baseURL: this.config.openaiBaseUrl });
  }

  private localProvider(): LocalLlamaProvider {
    this.local ??= new LocalLlamaProvider({ threads: this.config.localThreads ?? DEFAULT_LOCAL_THREADS });
    return this.local;
  }

  async dispose(): Promise<void> {
    await this.local?.dispose?.();
  }
}
