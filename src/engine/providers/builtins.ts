/**
 * The built-in provider factories: the local node-llama-cpp provider (one instance, so a model
 * loads once per process), OpenAI-compatible, Ollama (OpenAI-compatible at its local endpoint),
 * OpenRouter, LM Studio, any other OpenAI-compatible server (`compat:`) and Anthropic. `vscode-lm` is registered by the VS Code extension; outside VS Code a ref to it
 * gets a clear error.
 *
 * Each factory imports its provider module on its first resolve: the OpenAI and Anthropic SDKs
 * (about 150 KiB of the bundle) and the local provider (which imports node-llama-cpp) are not
 * evaluated while VS Code activates the extension or the engine starts, only when a model of
 * that kind is first used. esbuild keeps a dynamic `import()` of a bundled module as a lazy
 * initialiser inside the same CommonJS bundle.
 */
import type { LocalLlamaProvider } from './local-llama';
import type { ProviderFactory, ProviderRegistry } from './registry';
import { ProviderError } from './types';
import { compatEndpoints, compatKey, splitCompatModel } from './compat-endpoints';

/** Ollama's default local OpenAI-compatible endpoint. */
export const DEFAULT_OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';
/** OpenRouter's OpenAI-compatible API. */
export const DEFAULT_OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
/** LM Studio's default local server. */
export const DEFAULT_LMSTUDIO_BASE_URL = 'http://127.0.0.1:1234/v1';
/** Threads for in-process llama.cpp: 1 is fastest on small (2-core) machines under load. */
export const DEFAULT_LOCAL_THREADS = 1;

export interface BuiltinProviderOptions {
  /** The generated demo GGUF (`local:demo`). */
  demoModelPath: string;
  localThreads?: number;
}

function localFactory(opts: BuiltinProviderOptions): ProviderFactory {
  let local: Promise<LocalLlamaProvider> | undefined;
  return {
    kind: 'local',
    async resolve(model, ref) {
      local ??= import('./local-llama').then(
        (m) => new m.LocalLlamaProvider({ threads: opts.localThreads ?? DEFAULT_LOCAL_THREADS }),
        (e: unknown) => {
          local = undefined; // a failed import is tried again on the next resolve
          throw e;
        },
      );
      const isDemo = model === 'demo';
      return { provider: await local, model: isDemo ? opts.demoModelPath : model, label: ref, toolsEnabled: !isDemo };
    },
    async dispose() {
      const provider = await local?.catch(() => undefined);
      await provider?.dispose?.();
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
    const { OpenAICompatibleProvider } = await import('./openai');
    return { provider: new OpenAICompatibleProvider({ apiKey: apiKey ?? 'not-needed', baseURL }), model, label: ref, toolsEnabled: true };
  },
};

const ollamaFactory: ProviderFactory = {
  kind: 'ollama',
  async resolve(model, ref, ctx) {
    const baseURL = ctx.settings().ollamaBaseUrl || DEFAULT_OLLAMA_BASE_URL;
    const { OpenAICompatibleProvider } = await import('./openai');
    return { provider: new OpenAICompatibleProvider({ apiKey: 'ollama', baseURL, label: 'Ollama' }), model, label: ref, toolsEnabled: true };
  },
};

const openrouterFactory: ProviderFactory = {
  kind: 'openrouter',
  async resolve(model, ref, ctx) {
    const apiKey = await ctx.secret('openrouterApiKey');
    if (!apiKey) throw new ProviderError('auth', 'No OpenRouter API key is set (VS Code: "Vox: Connect a Model…"; CLI: OPENROUTER_API_KEY).');
    const baseURL = ctx.settings().openrouterBaseUrl || DEFAULT_OPENROUTER_BASE_URL;
    const { OpenAICompatibleProvider } = await import('./openai');
    return { provider: new OpenAICompatibleProvider({ apiKey, baseURL, label: 'OpenRouter', id: 'openrouter' }), model, label: ref, toolsEnabled: true };
  },
};

const lmstudioFactory: ProviderFactory = {
  kind: 'lmstudio',
  async resolve(model, ref, ctx) {
    const baseURL = ctx.settings().lmstudioBaseUrl || DEFAULT_LMSTUDIO_BASE_URL;
    const { OpenAICompatibleProvider } = await import('./openai');
    return { provider: new OpenAICompatibleProvider({ apiKey: 'lm-studio', baseURL, label: 'LM Studio', id: 'lmstudio' }), model, label: ref, toolsEnabled: true };
  },
};

const compatFactory: ProviderFactory = {
  kind: 'compat',
  async resolve(named, ref, ctx) {
    const { endpoint, model } = splitCompatModel(named, compatEndpoints(ctx.settings()));
    if (!endpoint) throw new ProviderError('badRequest', 'No OpenAI-compatible endpoint is set for compat: models (VS Code: "Vox: Connect a Model…" or the vox.compatEndpoints setting; CLI: VOX_COMPAT_BASE_URL).');
    const apiKey = (await compatKey(endpoint, ctx)) ?? 'not-needed';
    const { OpenAICompatibleProvider } = await import('./openai');
    return { provider: new OpenAICompatibleProvider({ apiKey, baseURL: endpoint.baseUrl, label: `${endpoint.name} (OpenAI-compatible)`, id: 'compat' }), model, label: ref, toolsEnabled: true };
  },
};

const anthropicFactory: ProviderFactory = {
  kind: 'anthropic',
  async resolve(model, ref, ctx) {
    const apiKey = await ctx.secret('anthropicApiKey');
    if (!apiKey) throw new ProviderError('auth', 'No Anthropic API key is set (VS Code: "Vox: Set API Key"; CLI: ANTHROPIC_API_KEY).');
    const { AnthropicProvider } = await import('./anthropic');
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
  for (const f of [localFactory(opts), openaiFactory, ollamaFactory, anthropicFactory, openrouterFactory, lmstudioFactory, compatFactory, vscodeLmOutsideVsCode]) registry.register(f);
}
