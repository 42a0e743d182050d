/**
 * LocalLlamaProvider: runs GGUF models in-process with node-llama-cpp (CPU only, prebuilt
 * binaries, never builds or downloads). Owns lazy loading of the ESM-only package via a real
 * dynamic `import()`, a per-path cache of model + context, a FIFO queue that serialises requests
 * on a model's single context sequence, streaming of text/reasoning deltas, cancellation, usage
 * and the grammar-constrained tool-call mode (protocol in local-llama-tools.ts).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { QUOTED_INPUT_CHARS, quote } from '../../protocol/wire/quote';
import * as path from 'node:path';
import type {
  ChatWrapper,
  Llama,
  LlamaChat,
  LlamaChatResponseChunk,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
  SpecializedChatWrapperTypeName,
} from 'node-llama-cpp';
import { isDemoModel } from '../model/demo-model';
import { checkGgufFile, checkTensorData } from './local-llama-checks';
import { EventChannel, SerialQueue } from './local-llama-queue';
import { MessageTextStreamer, parseToolReply, toChatHistory, toolResponseSchema } from './local-llama-tools';
import {
  ProviderError,
  type ChatMessage,
  type ModelProvider,
  type ProviderEvent,
  type StopReason,
  type StreamRequest,
  type ToolSpec,
} from './types';

type NodeLlamaCpp = typeof import('node-llama-cpp');

export interface LocalLlamaProviderOptions {
  /** CPU threads per evaluation. Default 1: on small machines extra threads spin-wait. */
  threads?: number;
  /** Context window in tokens (capped at the model's training context). */
  contextSize?: number;
  /** Sampling seed used when temperature > 0, for reproducible output (otherwise one is drawn per request). */
  seed?: number;
  /** GGUF path used for the model names `demo` / `local:demo`. */
  demoModelPath?: string;
  /** Receives llama.cpp's warnings and errors (otherwise dropped). */
  log?: (level: string, message: string) => void;
}

/**
 * The `gpu` option for node-llama-cpp's `getLlama` on a platform: the one whose prebuilt binaries
 * the VSIX for that platform ships (scripts/vsix/targets.mjs). node-llama-cpp 3.x looks its
 * binaries package up by platform, arch AND gpu type (`getPrebuiltBinariesPackageDirectoryForBuildOptions`
 * in dist/bindings/utils/compileLLamaCpp.js) and names the binary's folder the same way
 * (`getBuildFolderNameForBuildOptions`): on macOS arm64 the only prebuilt package,
 * `@node-llama-cpp/mac-arm64-metal`, is imported for `gpu: 'metal'` alone, so `gpu: false` there
 * finds no binary. Everywhere else the CPU build is the one shipped (`false`). Models still run
 * with `gpuLayers: 0` (CPU), so the choice changes which binary loads, not where layers run.
 */
export function llamaGpuOption(platform: NodeJS.Platform = process.platform, arch: string = process.arch): 'metal' | false {
  return platform === 'darwin' && arch === 'arm64' ? 'metal' : false;
}

/** Default CPU threads (see LocalLlamaProviderOptions.threads). */
const DEFAULT_THREADS = 1;
/** Default context window in tokens; small enough for laptops, large enough for agent turns. */
const DEFAULT_CONTEXT_SIZE = 4096;
/** Output cap when the request sets none. */
const DEFAULT_MAX_TOKENS = 1024;
/** Sampling temperature when the request sets none (0 would be greedy). */
const DEFAULT_TEMPERATURE = 0.7;
/** Seeds drawn per request are below this (llama.cpp takes a 32-bit seed; 2^31 keeps it positive). */
const MAX_SAMPLING_SEED = 2 ** 31;
/** Compiled tool grammars kept per provider (oldest evicted first). */
const MAX_CACHED_GRAMMARS = 32;
/** llama.cpp error lines remembered to explain load failures. */
const MAX_REMEMBERED_ERRORS = 5;
/** GGUF metadata key a model uses to cap grammar string/array lengths (see make-demo-model.mjs). */
const GRAMMAR_MAX_LENGTH_KEY = ['vox', 'grammar', 'max_length'] as const;
/** GGUF metadata key naming the node-llama-cpp chat wrapper to use instead of auto-detection. */
const CHAT_WRAPPER_KEY = ['vox', 'chat_wrapper'] as const;
/**
 * How long dispose() waits for the llama.cpp backend. After a failed load node-llama-cpp holds
 * the backend until garbage collection, so an unbounded wait could hang shutdown; the backend is
 * released by the finalizer or at process exit anyway.
 */
const LLAMA_DISPOSE_WAIT_MS = 2000;

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  /** One chat per sequence: resolving the chat wrapper from the GGUF template costs ~1 s, so do it once. */
  chat: LlamaChat;
  /** Serialises requests: the model has one context sequence. */
  queue: SerialQueue;
  /** From the model's metadata: cap for grammar strings and arrays, if the model needs one. */
  grammarMaxLength: number | undefined;
}

export class LocalLlamaProvider implements ModelProvider {
  readonly id = 'local';
  readonly isLocal = true;
  private mod: Promise<NodeLlamaCpp> | undefined;
  private llama: Promise<Llama> | undefined;
  private readonly models = new Map<string, Promise<LoadedModel>>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly recentErrors: string[] = [];

  constructor(private readonly options: LocalLlamaProviderOptions = {}) {}

  stream(req: StreamRequest): AsyncIterable<ProviderEvent> {
    return this.run(req);
  }

  /** Loads (or returns the cached) model for a GGUF path or `demo`; throws ProviderError('modelLoad'). */
  async load(model: string): Promise<{ path: string; contextSize: number; trainContextSize: number }> {
    const modelPath = this.resolvePath(model);
    const entry = await this.getModel(modelPath);
    return { path: modelPath, contextSize: entry.context.contextSize, trainContextSize: entry.model.trainContextSize };
  }

  /** The prompt tokens of a request, by the model's own tokenizer and chat template (loads the model). */
  async countPromptTokens(req: { model: string; messages: ChatMessage[]; tools: ToolSpec[] }): Promise<number> {
    const entry = await this.getModel(this.resolvePath(req.model));
    const history = toChatHistory(req.messages, req.tools.length > 0 ? req.tools : undefined);
    return entry.chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(entry.model.tokenizer).length;
  }

  /** The loaded context's size in tokens (loads the model). */
  async contextWindow(model: string): Promise<number> {
    return (await this.getModel(this.resolvePath(model))).context.contextSize;
  }

  /** Loads the model ahead of its first request (`ModelProvider.prepare`); true when this call loaded it. */
  async prepare(model: string): Promise<boolean> {
    const modelPath = this.resolvePath(model);
    const wasLoaded = this.models.has(modelPath);
    await this.getModel(modelPath);
    return !wasLoaded;
  }

  /** Frees every loaded model and the llama.cpp backend after in-flight requests finish. */
  async dispose(): Promise<void> {
    const entries = [...this.models.values()];
    this.models.clear();
    this.grammars.clear();
    for (const p of entries) {
      const entry = await p.catch(() => undefined);
      if (!entry) continue;
      await entry.queue.idle();
      entry.chat.dispose({ disposeSequence: false });
      await entry.context.dispose();
      await entry.model.dispose();
    }
    const llama = await this.llama?.catch(() => undefined);
    this.llama = undefined;
    if (llama) await Promise.race([llama.dispose(), sleep(LLAMA_DISPOSE_WAIT_MS)]);
  }

  private async *run(req: StreamRequest): AsyncGenerator<ProviderEvent> {
    throwIfCancelled(req.signal);
    const entry = await this.getModel(this.resolvePath(req.model));
    const release = await entry.queue.acquire(
      req.signal,
      () => new ProviderError('cancelled', 'Local generation was cancelled while waiting for the model.'),
    );
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const channel = new EventChannel<ProviderEvent>();
    const generation = this.generate(entry, req, stop.signal, channel).then(
      () => channel.end(),
      (e: unknown) =>
        channel.end(e instanceof ProviderError ? e : new ProviderError('server', `Local model failed: ${errorText(e)}`, { cause: e })),
    );
    try {
      yield* channel;
    } finally {
      // Also reached when the consumer stops early: stop generating before freeing the sequence.
      stop.abort();
      req.signal?.removeEventListener('abort', onAbort);
      await generation;
      release();
    }
  }

  private async generate(entry: LoadedModel, req: StreamRequest, signal: AbortSignal, out: EventChannel<ProviderEvent>): Promise<void> {
    const tools = req.tools && req.tools.length > 0 ? req.tools : undefined;
    const history = toChatHistory(req.messages, tools);
    const prompt = entry.chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(entry.model.tokenizer);
    // node-llama-cpp reuses the longest common prefix of what the sequence already holds.
    const cached = commonPrefixLength(entry.sequence.contextTokens, prompt);
    const grammar = tools ? await this.toolGrammar(tools, entry) : undefined;
    const meterBefore = entry.sequence.tokenMeter.getState();
    const streamer = tools ? new MessageTextStreamer() : undefined;
    let raw = '';
    const onResponseChunk = (chunk: LlamaChatResponseChunk): void => {
      if (chunk.type === 'segment') {
        if (chunk.text) out.push({ type: 'reasoning', delta: chunk.text });
      } else if (streamer) {
        raw += chunk.text;
        const delta = streamer.push(chunk.text);
        if (delta) out.push({ type: 'text', delta });
      } else if (chunk.text) {
        out.push({ type: 'text', delta: chunk.text });
      }
    };
    const temperature = req.temperature ?? DEFAULT_TEMPERATURE;
    let stopReason: StopReason;
    try {
      const res = await entry.chat.generateResponse(history, {
        onResponseChunk,
        signal,
        stopOnAbortSignal: false,
        maxTokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
        temperature,
        ...(req.topP !== undefined ? { topP: req.topP } : {}),
        // node-llama-cpp seeds with the current second when given none, so every reply within a
        // second would be the same sample: draw one per request unless a seed is configured.
        ...(temperature > 0 ? { seed: this.options.seed ?? randomInt(MAX_SAMPLING_SEED) } : {}),
        ...(grammar ? { grammar } : {}),
      });
      stopReason = res.metadata.stopReason === 'maxTokens' ? 'length' : 'end';
    } catch (e) {
      if (signal.aborted) throw new ProviderError('cancelled', 'Local generation was cancelled.', { cause: e });
      throw new ProviderError('server', `Local model failed while generating: ${errorText(e)}`, { cause: e });
    }
    if (signal.aborted) throw new ProviderError('cancelled', 'Local generation was cancelled.');
    if (tools && streamer) stopReason = this.finishToolReply(raw, tools, stopReason, streamer, out);
    const used = entry.sequence.tokenMeter.diff(meterBefore);
    out.push({
      type: 'usage',
      usage: { inputTokens: prompt.length, outputTokens: used.usedOutputTokens, ...(cached > 0 ? { cacheReadTokens: cached } : {}) },
    });
    out.push({ type: 'done', stopReason });
  }

  /** Turns a finished protocol reply into events; returns the stop reason. */
  private finishToolReply(
    raw: string,
    tools: ToolSpec[],
    stopReason: StopReason,
    streamer: MessageTextStreamer,
    out: EventChannel<ProviderEvent>,
  ): StopReason {
    let reply;
    try {
      reply = parseToolReply(raw, tools);
    } catch (e) {
      // Cut off by maxTokens: any message text has already streamed; an unfinished call is dropped.
      if (stopReason === 'length') return 'length';
      throw new ProviderError('malformedStream', `Local model produced an invalid tool reply (${errorText(e)}): ${quote(raw, QUOTED_INPUT_CHARS)}`);
    }
    if (reply.kind === 'message') {
      if (reply.text.startsWith(streamer.text) && reply.text.length > streamer.text.length) {
        out.push({ type: 'text', delta: reply.text.slice(streamer.text.length) });
      }
      return stopReason;
    }
    const id = `call_${randomUUID().replace(/-/g, '')}`;
    out.push({ type: 'toolCall', call: { id, name: reply.name, argumentsJson: reply.argumentsJson } });
    return 'toolCalls';
  }

  private resolvePath(model: string): string {
    if (isDemoModel(model)) {
      if (!this.options.demoModelPath) {
        throw new ProviderError('modelLoad', 'The demo model was requested but no demo model path is configured.');
      }
      return path.resolve(this.options.demoModelPath);
    }
    return path.resolve(model.startsWith('local:') ? model.slice('local:'.length) : model);
  }

  private module(): Promise<NodeLlamaCpp> {
    // A real dynamic import: node-llama-cpp is ESM-only and our bundles are CommonJS.
    this.mod ??= import('node-llama-cpp');
    return this.mod;
  }

  private getLlama(): Promise<Llama> {
    this.llama ??= this.module().then((mod) =>
      mod.getLlama({
        gpu: llamaGpuOption(),
        build: 'never',
        logLevel: mod.LlamaLogLevel.warn,
        logger: (level, message) => {
          const text = message.trim();
          if (level === mod.LlamaLogLevel.error || level === mod.LlamaLogLevel.fatal) {
            this.recentErrors.push(text);
            if (this.recentErrors.length > MAX_REMEMBERED_ERRORS) this.recentErrors.shift();
          }
          this.options.log?.(level, text);
        },
      }),
    );
    return this.llama;
  }

  private getModel(modelPath: string): Promise<LoadedModel> {
    let entry = this.models.get(modelPath);
    if (!entry) {
      entry = this.loadModel(modelPath);
      this.models.set(modelPath, entry);
      entry.catch(() => this.models.delete(modelPath)); // let a later request retry
    }
    return entry;
  }

  private async loadModel(modelPath: string): Promise<LoadedModel> {
    await checkGgufFile(modelPath);
    let llama: Llama;
    try {
      llama = await this.getLlama();
    } catch (e) {
      this.llama = undefined;
      throw new ProviderError('modelLoad', `Cannot start node-llama-cpp to load ${modelPath}: ${errorText(e)}`, { cause: e });
    }
    const mod = await this.module();
    await checkTensorData(mod, llama, modelPath);
    this.recentErrors.length = 0;
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath, gpuLayers: 0 });
    } catch (e) {
      const detail = this.recentErrors.find((l) => /error loading model/.test(l)) ?? this.recentErrors[0] ?? errorText(e);
      throw new ProviderError('modelLoad', `Cannot load model ${modelPath}: ${detail}`, { cause: e });
    }
    try {
      const context = await model.createContext({
        contextSize: Math.min(this.options.contextSize ?? DEFAULT_CONTEXT_SIZE, model.trainContextSize),
        threads: this.options.threads ?? DEFAULT_THREADS,
        sequences: 1,
      });
      const limit = readMetadata(model.fileInfo.metadata, GRAMMAR_MAX_LENGTH_KEY);
      const sequence = context.getSequence();
      return {
        model,
        context,
        sequence,
        chat: new mod.LlamaChat({ contextSequence: sequence, chatWrapper: chatWrapperFor(mod, model) }),
        queue: new SerialQueue(),
        grammarMaxLength: typeof limit === 'number' && limit > 0 ? limit : undefined,
      };
    } catch (e) {
      await model.dispose();
      throw new ProviderError('modelLoad', `Cannot create a context for ${modelPath}: ${errorText(e)}`, { cause: e });
    }
  }

  private async toolGrammar(tools: ToolSpec[], entry: LoadedModel): Promise<LlamaGrammar> {
    try {
      return await this.grammar(toolResponseSchema(tools, entry.grammarMaxLength));
    } catch (e) {
      throw new ProviderError('badRequest', `Cannot turn the tool schemas into a grammar: ${errorText(e)}`, { cause: e });
    }
  }

  private grammar(schema: Record<string, unknown>): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let g = this.grammars.get(key);
    if (!g) {
      // The schema is built by toolResponseSchema in node-llama-cpp's supported subset.
      g = this.getLlama().then((llama) => llama.createGrammarForJsonSchema(schema as never) as Promise<LlamaGrammar>);
      this.grammars.set(key, g);
      g.catch(() => this.grammars.delete(key));
      if (this.grammars.size > MAX_CACHED_GRAMMARS) this.grammars.delete(this.grammars.keys().next().value!);
    }
    return g;
  }
}

/** The model's declared chat wrapper (see CHAT_WRAPPER_KEY), else node-llama-cpp's auto-detection. */
function chatWrapperFor(mod: NodeLlamaCpp, model: LlamaModel): 'auto' | ChatWrapper {
  const hint = readMetadata(model.fileInfo.metadata, CHAT_WRAPPER_KEY);
  const known: readonly string[] = mod.specializedChatWrapperTypeNames;
  if (typeof hint !== 'string' || !known.includes(hint)) return 'auto';
  return mod.resolveChatWrapper(model, { type: hint as SpecializedChatWrapperTypeName });
}

function commonPrefixLength(a: readonly unknown[], b: readonly unknown[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function readMetadata(metadata: unknown, keyPath: readonly string[]): unknown {
  let v: unknown = metadata;
  for (const k of keyPath) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ProviderError('cancelled', 'Local generation was cancelled.');
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
