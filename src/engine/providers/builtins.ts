/**
 * The built-in provider factories: the local node-llama-cpp provider (one instance, so a model
 * loads once per process), OpenAI-compatible, Ollama (OpenAI-compatible at its local endpoint)
 * and Anthropic. `vscode-lm` is registered by the VS Code extension; outside VS Code a ref to it
 * gets a clear error.
 */
import { AnthropicProvider } from './anthropic';
import { LocalLlamaProvider } from './local-llama';
import { OpenAICompatibleProvider } from './openai';
import type { ProviderFactory, ProviderRegistry } from './registry';
import { ProviderError } from './types';

/** Ollama's default local OpenAI-compatible endpoint. */
export const DEFAULT_OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';
/** Threads for in-process llama.cpp: 1 is fastest on small (2-core) machines under load. */
export const DEFAULT_LOCAL_THREADS = 1;

export interface BuiltinProviderOptions {
  /** The generated demo GGUF (`local:demo`). */
  demoModelPath: string;
  localThreads?: number;
}

function localFactory(opts: BuiltinProviderOptions): ProviderFactory {
  let local: LocalLlamaProvider | undefined;
  return {
    kind: 'local',
    resolve(model, ref) {
      local ??= new LocalLlamaProvider({ threads: opts.localThreads ?? DEFAULT_LOCAL_THREADS });
      const isDemo = model === 'demo';
      return { provider: local, model: isDemo ? opts.demoModelPath : model, label: ref, toolsEnabled: !isDemo };
    },
    async dispose() {
      await local?.dispose?.();
    },
  };
}

const openaiFactory: ProviderFactory = {
  kind: 'openai',
  async resolve(model, ref, ctx) {
    const apiKey = await ctx.secret('openaiApiKey');
    const baseURL = ctx.settings().openaiBaseUrl || undefined;
    if (!apiKey && !baseURL) {
      throw new ProviderError('auth', 'No OpenAI API key is set (VS Code: "Vox: Set API Key"; CLI: OPENAI_API_KEY), and no OpenAI-compatible base URL.');
    }
    return { provider: new OpenAICompatibleProvider({ apiKey: apiKey ?? 'not-needed', baseURL }), model, label: ref, toolsEnabled: true };
  },
};

const ollamaFactory: ProviderFactory = {
  kind: 'ollama',
  resolve(model, ref, ctx) {
    const baseURL = ctx.settings().ollamaBaseUrl || DEFAULT_OLLAMA_BASE_URL;
    return { provider: new OpenAICompatibleProvider({ apiKey: 'ollama', baseURL }), model, label: ref, toolsEnabled: true };
  },
};

const anthropicFactory: ProviderFactory = {
  kind: 'anthropic',
  async resolve(model, ref, ctx) {
    const apiKey = await ctx.secret('anthropicApiKey');
    if (!apiKey) throw new ProviderError('auth', 'No Anthropic API key is set (VS Code: "Vox: Set API Key"; CLI: ANTHROPIC_API_KEY).');
    return { provider: new AnthropicProvider({ apiKey, baseURL: ctx.settings().anthropicBaseUrl || undefined }), model, label: ref, toolsEnabled: true };
  },
};

const vscodeLmOutsideVsCode: ProviderFactory = {
  kind: 'vscode-lm',
  resolve() {
    throw new ProviderError('notSupported', 'VS Code language models are only available inside VS Code.');
  },
};

/** Registers the built-ins (kinds a host registered first keep the host's factory). */
export function registerBuiltinProviders(registry: ProviderRegistry, opts: BuiltinProviderOptions): void {
  for (const f of [localFactory(opts), openaiFactory, ollamaFactory, anthropicFactory, vscodeLmOutsideVsCode]) registry.register(f);
}
