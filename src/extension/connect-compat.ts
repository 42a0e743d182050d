/**
 * Connecting a named OpenAI-compatible endpoint, save-after-test: the base URL, the name (default:
 * its host[:port]; a clash or a bad name is refused as it is typed) and the key are held, not
 * saved, while the engine lists the models (`listModels` with the candidate URL and key) and
 * tests one (`testModel`). Only a passing test — or the user's "Use Anyway" — saves the endpoint,
 * its key (SecretStorage, per endpoint) and the model; a failure offers Retry / Edit / Use Anyway /
 * Cancel and leaves every saved endpoint as it was. No `vscode` here: the UI and the saving are
 * passed in (connect-model.ts gives VS Code's), so the flow runs against a real engine in tests.
 */
import { ClientError } from '../client/engine-client';
import type { EngineClient } from '../client/engine-client';
import type { CompatEndpointView as CompatEndpoint, ListedModelView } from '../protocol/commands/models';

export type FailureChoice = 'retry' | 'edit' | 'useAnyway' | 'cancel';

/** What the flow asks the user; undefined answers cancel. */
export interface ConnectCompatUi {
  /** The base URL (`check` answers an error message, or undefined when the text is fine). */
  askUrl(value: string, check: (text: string) => Promise<string | undefined>): Promise<string | undefined>;
  /** The endpoint's name, `value` the default. */
  askName(value: string, check: (text: string) => Promise<string | undefined>): Promise<string | undefined>;
  /** The key ('' for none). */
  askKey(endpoint: string): Promise<string | undefined>;
  /** A model of the list (or typed: the list may be empty). */
  pickModel(models: ListedModelView[], endpoint: string): Promise<string | undefined>;
  /** A failed listing or test, with the engine's message. */
  failed(message: string, phase: 'list' | 'test'): Promise<FailureChoice | undefined>;
}

/** Where the flow saves, only at its end. */
export interface ConnectCompatStore {
  /** Saves the endpoint (in place of `replacing`) and its key (empty: none). */
  save(endpoint: CompatEndpoint, apiKey: string, replacing?: string): Promise<void>;
}

export interface ConnectCompatResult {
  ref: string;
  endpoint: CompatEndpoint;
  /** false: saved by "Use Anyway" after a failure. */
  tested: boolean;
}

function describe(e: unknown): string {
  return e instanceof ClientError || e instanceof Error ? e.message : String(e);
}

/** The whole flow; undefined when the user cancelled (then nothing was saved). */
export async function connectCompat(client: EngineClient, ui: ConnectCompatUi, store: ConnectCompatStore, edit?: CompatEndpoint): Promise<ConnectCompatResult | undefined> {
  const replacing = edit ? { replacing: edit.name } : {};
  const check = (baseUrl: string, n?: string) => client.call('checkCompatEndpoint', { baseUrl, ...(n ? { name: n } : {}), ...replacing });
  let url = edit?.baseUrl ?? '';
  let name: string | undefined = edit?.name;
  let key: string | undefined;
  const askAll = async (): Promise<CompatEndpoint | undefined> => {
    const typed = await ui.askUrl(url, (t) => problem(() => check(t)));
    if (typed === undefined) return undefined;
    url = typed.trim();
    const fallback = new URL(url).host;
    const n = await ui.askName(name ?? fallback, (t) => problem(() => check(url, t.trim() || fallback)));
    if (n === undefined) return undefined;
    name = n.trim() || fallback;
    key = await ui.askKey(name);
    if (key === undefined) return undefined;
    return check(url, name);
  };
  let candidate = await askAll();
  if (!candidate) return undefined;
  for (;;) {
    // List with the candidate URL and key; nothing is saved yet.
    let models: ListedModelView[] | undefined;
    try {
      models = (await client.call('listModels', { provider: 'compat', baseUrl: candidate.baseUrl, apiKey: key ?? '' })).models;
    } catch (e) {
      const choice = await ui.failed(describe(e), 'list');
      if (choice === 'retry') continue;
      if (choice === 'edit') {
        if (!(candidate = await askAll())) return undefined;
        continue;
      }
      if (choice !== 'useAnyway') return undefined;
      models = [];
    }
    const model = await ui.pickModel(models, candidate.name);
    if (!model) return undefined;
    const outcome = await testLoop(client, ui, candidate, model, key ?? '');
    if (outcome === 'edit') {
      if (!(candidate = await askAll())) return undefined;
      continue;
    }
    if (outcome === 'cancel') return undefined;
    await store.save(candidate, key ?? '', edit?.name);
    return { ref: `compat:${candidate.name}/${model}`, endpoint: candidate, tested: outcome === 'ok' };
  }
}

async function testLoop(client: EngineClient, ui: ConnectCompatUi, candidate: CompatEndpoint, model: string, apiKey: string): Promise<'ok' | 'useAnyway' | 'edit' | 'cancel'> {
  for (;;) {
    try {
      await client.call('testModel', { ref: `compat:${model}`, baseUrl: candidate.baseUrl, apiKey });
      return 'ok';
    } catch (e) {
      const choice = await ui.failed(describe(e), 'test');
      if (choice === 'retry') continue;
      return choice ?? 'cancel';
    }
  }
}

async function problem(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (e) {
    return describe(e);
  }
}
