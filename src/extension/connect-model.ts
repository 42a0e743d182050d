/**
 * "Vox: Connect a Model…": one flow from nothing to a working model. Pick a provider (OpenAI,
 * Anthropic, OpenRouter, Ollama, LM Studio, any OpenAI-compatible URL, a GGUF file, VS Code
 * language models) → its key (a password box, into SecretStorage) or its base URL → its models,
 * listed from its API (protocol `listModels`; VS Code's from `vscode.lm.selectChatModels()`) →
 * the connection test with progress (`testModel`) → on failure the exact message (provider,
 * host:port, status, the provider's words) with Retry and a way to fix the key or URL; on
 * success the model is set (`setModel`, which also remembers it among the recent models).
 * Save-after-test: the key and base URL typed are held and sent with the list and the test;
 * they are saved only when the test passes or the user chooses "Use Anyway", so a failed
 * attempt never changes a working configuration. OpenAI-compatible URLs are named endpoints
 * side by side (connect-compat.ts).
 */
import * as vscode from 'vscode';
import { ClientError } from '../client/engine-client';
import type { CompatEndpointView, ConnectProviderId } from '../protocol/commands/models';
import { connectCompat, type ConnectCompatUi, type FailureChoice } from './connect-compat';
import { manageEndpoints } from './manage-endpoints';
import { manageEndpointsUi } from './manage-endpoints-ui';
import type { EngineHost, SecretProvider } from './engine-host';

export const CONNECT_COMMAND = 'vox.connectModel';

type Choice = ConnectProviderId | 'gguf' | 'vscode-lm' | 'manage';

interface ProviderItem extends vscode.QuickPickItem { id: Choice }

/** How each HTTP provider is set up here: its key (SecretStorage) and its base URL setting. */
const SETUP: Record<ConnectProviderId, { label: string; secret?: SecretProvider; keyOptional?: boolean; setting: string; defaultUrl?: string; askUrl: boolean }> = {
  openai: { label: 'OpenAI', secret: 'openai', setting: 'openaiBaseUrl', askUrl: false },
  anthropic: { label: 'Anthropic', secret: 'anthropic', setting: 'anthropicBaseUrl', askUrl: false },
  openrouter: { label: 'OpenRouter', secret: 'openrouter', setting: 'openrouterBaseUrl', askUrl: false },
  ollama: { label: 'Ollama', setting: 'ollamaBaseUrl', defaultUrl: 'http://127.0.0.1:11434/v1', askUrl: true },
  lmstudio: { label: 'LM Studio', setting: 'lmstudioBaseUrl', defaultUrl: 'http://127.0.0.1:1234/v1', askUrl: true },
  compat: { label: 'OpenAI-compatible server', secret: 'compat', keyOptional: true, setting: 'compatBaseUrl', askUrl: true },
};

const PROVIDERS: ProviderItem[] = [
  { id: 'openai', label: 'OpenAI', detail: 'GPT models with an OpenAI API key' },
  { id: 'anthropic', label: 'Anthropic', detail: 'Claude models with an Anthropic API key' },
  { id: 'openrouter', label: 'OpenRouter', detail: 'hundreds of models with one OpenRouter key' },
  { id: 'ollama', label: 'Ollama', detail: 'models served by Ollama on this machine (or another)' },
  { id: 'lmstudio', label: 'LM Studio', detail: "LM Studio's local server" },
  { id: 'compat', label: 'OpenAI-compatible URL…', detail: 'vLLM, llama.cpp server, LiteLLM, DeepSeek, any /v1 endpoint' },
  { id: 'gguf', label: 'GGUF file…', detail: 'run a local model file in process with llama.cpp' },
  { id: 'vscode-lm', label: 'VS Code language models', detail: 'models other extensions provide (e.g. GitHub Copilot)' },
  { id: 'manage', label: 'Manage OpenAI-compatible endpoints…', detail: 'rename, edit or remove the endpoints saved before' },
];

const cfg = () => vscode.workspace.getConfiguration('vox');

function describe(e: unknown): string {
  return e instanceof ClientError || e instanceof Error ? e.message : String(e);
}

/** Runs `fn` under a notification progress. */
function withProgress<T>(title: string, fn: () => Promise<T>): Thenable<T> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, fn);
}

export class ConnectModelFlow {
  constructor(private readonly host: EngineHost, private readonly log: vscode.LogOutputChannel) {}

  /** The whole flow; `preset` skips the provider pick (the banner's and Set API Key's entry points). */
  async run(preset?: Choice, opts: { keySaved?: boolean } = {}): Promise<string | undefined> {
    const id = preset ?? (await vscode.window.showQuickPick(PROVIDERS, { title: 'Vox: Connect a Model', placeHolder: 'Where is the model?', ignoreFocusOut: true }))?.id;
    if (!id) return undefined;
    if (id === 'gguf') return void (await vscode.commands.executeCommand('vox.chooseGguf'));
    if (id === 'vscode-lm') return this.vscodeLm();
    if (id === 'compat') return this.compat();
    if (id === 'manage') return void (await this.manage());
    return this.http(id, opts.keySaved === true);
  }

  private async vscodeLm(): Promise<string | undefined> {
    for (;;) {
      let models: vscode.LanguageModelChat[] = [];
      try {
        models = await vscode.lm.selectChatModels();
      } catch (e) {
        this.log.warn(`listing VS Code language models failed: ${describe(e)}`);
      }
      if (models.length === 0) {
        const again = await vscode.window.showWarningMessage(
          'Vox: no VS Code language models are available. Install and sign in to an extension that provides them (for example GitHub Copilot Chat), then retry — or connect another provider.',
          'Retry', 'Other Provider…',
        );
        if (again === 'Retry') continue;
        if (again === 'Other Provider…') return this.run();
        return undefined;
      }
      const pick = await vscode.window.showQuickPick(
        models.map((m) => ({ label: m.name, description: `${m.vendor} · ${m.family}`, detail: `vscode-lm:${m.id} · ${m.maxInputTokens} input tokens`, ref: `vscode-lm:${m.id}` })),
        { title: 'Vox: VS Code language models', placeHolder: `${models.length} model${models.length === 1 ? '' : 's'} available`, ignoreFocusOut: true },
      );
      if (!pick) return undefined;
      return this.use(pick.ref, 'VS Code');
    }
  }

  /** Asks for the key of a keyed provider: the text (held, not saved), null to keep the saved one, undefined when cancelled. */
  private async askKey(id: ConnectProviderId, force: boolean): Promise<string | null | undefined> {
    const setup = SETUP[id];
    if (!setup.secret) return null;
    if (!force && (await this.host.hasSecret(setup.secret))) return null;
    const key = await vscode.window.showInputBox({
      title: `Vox: ${setup.label} API key`,
      prompt: `${setup.label} API key — tested first, then kept in VS Code SecretStorage, never in settings${setup.keyOptional ? ' (leave empty if the server needs none)' : ''}`,
      password: true, ignoreFocusOut: true,
      validateInput: (v) => (!setup.keyOptional && v.trim() === '' ? 'Enter the key (or press Escape)' : undefined),
    });
    return key === undefined ? undefined : key.trim();
  }

  private async askUrl(id: ConnectProviderId, current: string | undefined): Promise<string | undefined> {
    const setup = SETUP[id];
    const value = current || cfg().get<string>(setup.setting) || setup.defaultUrl || '';
    const url = await vscode.window.showInputBox({
      title: `Vox: ${setup.label} base URL`, prompt: `The ${setup.label}'s base URL (OpenAI-compatible endpoints end in /v1)`, value,
      placeHolder: setup.defaultUrl ?? 'http://127.0.0.1:8000/v1', ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'A URL starting with http:// or https://'),
    });
    return url?.trim();
  }

  private async http(id: ConnectProviderId, keySaved: boolean): Promise<string | undefined> {
    const setup = SETUP[id];
    let baseUrl: string | undefined;
    if (setup.askUrl && !(baseUrl = await this.askUrl(id, undefined))) return undefined;
    // The candidate key: held and sent with the list and the test, saved only after them.
    let key: string | null | undefined = keySaved ? null : await this.askKey(id, false);
    if (key === undefined) return undefined;
    const candidate = () => ({ ...(baseUrl ? { baseUrl } : {}), ...(typeof key === 'string' ? { apiKey: key } : {}) });
    const client = await this.host.client();
    // List (Retry, fix the key or URL on failure).
    let list;
    for (;;) {
      try {
        list = await withProgress(`Vox: listing ${setup.label} models…`, () => client.call('listModels', { provider: id, ...candidate() }));
        break;
      } catch (e) {
        const fixes = [...(setup.secret ? ['Change Key'] : []), ...(setup.askUrl ? ['Change URL'] : []), 'Type a Model Name'];
        const choice = await vscode.window.showErrorMessage(`Vox: ${describe(e)}`, 'Retry', ...fixes);
        if (choice === 'Retry') continue;
        if (choice === 'Change Key') {
          const k = await this.askKey(id, true);
          if (k !== undefined) key = k;
          continue;
        }
        if (choice === 'Change URL' && (baseUrl = await this.askUrl(id, baseUrl))) continue;
        if (choice === 'Type a Model Name') {
          list = { models: [], endpoint: '', label: setup.label };
          break;
        }
        return undefined;
      }
    }
    // Pick, test (Retry, or pick another), then save and use.
    for (;;) {
      const model = await this.pickModel(id, list.models, list.endpoint);
      if (!model) return undefined;
      const ref = `${id}:${model}`;
      const tested = await this.test(ref, candidate());
      if (tested === 'cancel') return undefined;
      if (tested === 'again') continue;
      if (typeof key === 'string' && setup.secret) await this.host.setSecret(setup.secret, key || undefined);
      if (baseUrl) await cfg().update(setup.setting, baseUrl === setup.defaultUrl ? undefined : baseUrl, vscode.ConfigurationTarget.Global);
      return this.use(ref, list.endpoint || setup.label);
    }
  }

  /** "Vox: Manage Model Endpoints…": rename, edit or remove the named endpoints (manage-endpoints.ts). */
  async manage(): Promise<void> {
    await manageEndpoints(await this.host.client(), manageEndpointsUi(), { edit: async (endpoint) => void (await this.compat(endpoint)) });
  }

  /** An OpenAI-compatible endpoint (a new one, or `edit`'s URL and key), named, tested before anything is saved (connect-compat.ts). */
  private async compat(edit?: CompatEndpointView): Promise<string | undefined> {
    const client = await this.host.client();
    const result = await connectCompat(client, compatUi(edit !== undefined), {
      save: async (endpoint, apiKey, replacing) => {
        const list = (await client.call('listCompatEndpoints', {})).endpoints;
        await cfg().update('compatEndpoints', withEndpoint(list, endpoint, replacing), vscode.ConfigurationTarget.Global);
        await this.host.setProviderSecret(`compatApiKey:${endpoint.name}`, apiKey || undefined);
        if (replacing && replacing !== endpoint.name) await this.host.setProviderSecret(`compatApiKey:${replacing}`, undefined);
      },
    }, edit);
    if (!result) return undefined;
    this.log.info(`endpoint ${result.endpoint.name} (${result.endpoint.baseUrl}) saved${result.tested ? ' after its test passed' : ' without a passing test (Use Anyway)'}`);
    return this.use(result.ref, result.endpoint.name);
  }

  private async pickModel(id: ConnectProviderId, models: { id: string; label?: string; contextWindow?: number }[], endpoint: string): Promise<string | undefined> {
    const TYPE = '$(edit) Type a model name…';
    const items: (vscode.QuickPickItem & { model?: string })[] = models.map((m) => ({
      label: m.id, model: m.id,
      ...(m.label ? { description: m.label } : {}),
      ...(m.contextWindow ? { detail: `${m.contextWindow.toLocaleString()} tokens of context` } : {}),
    }));
    items.push({ label: TYPE, alwaysShow: true });
    const pick = await vscode.window.showQuickPick(items, {
      title: `Vox: ${SETUP[id].label} models`, matchOnDescription: true, ignoreFocusOut: true,
      placeHolder: models.length ? `${models.length} model${models.length === 1 ? '' : 's'} at ${endpoint} — pick one to test and use` : 'No model list: type the model name',
    });
    if (!pick) return undefined;
    if (pick.model) return pick.model;
    return (await vscode.window.showInputBox({ title: `Vox: ${SETUP[id].label} model`, prompt: 'Model name as the server knows it', ignoreFocusOut: true }))?.trim() || undefined;
  }

  /** The connection test of the candidate: 'ok', 'again' (pick another model) or 'cancel'. */
  private async test(ref: string, candidate: { baseUrl?: string; apiKey?: string }): Promise<'ok' | 'again' | 'cancel'> {
    const client = await this.host.client();
    for (;;) {
      try {
        const r = await withProgress(`Vox: testing ${ref}…`, () => client.call('testModel', { ref, ...candidate }));
        this.log.info(`connection test of ${ref} at ${r.endpoint}: ok in ${r.latencyMs} ms`);
        return 'ok';
      } catch (e) {
        this.log.warn(`connection test of ${ref} failed: ${describe(e)}`);
        const choice = await vscode.window.showErrorMessage(`Vox: ${describe(e)} Nothing was saved.`, 'Retry', 'Pick Another Model', 'Use Anyway');
        if (choice === 'Retry') continue;
        if (choice === 'Pick Another Model') return 'again';
        return choice === 'Use Anyway' ? 'ok' : 'cancel';
      }
    }
  }

  private async use(ref: string, where: string): Promise<string> {
    await (await this.host.client()).call('setModel', { model: ref });
    void vscode.window.showInformationMessage(`Vox: connected — now using ${ref} (${where}).`);
    return ref;
  }
}

/** `list` with `endpoint` added, or put in place of `replacing`. */
function withEndpoint(list: CompatEndpointView[], endpoint: CompatEndpointView, replacing?: string): CompatEndpointView[] {
  const i = replacing === undefined ? -1 : list.findIndex((e) => e.name === replacing);
  return i < 0 ? [...list, endpoint] : list.map((e, j) => (j === i ? endpoint : e));
}

/** The compat flow's questions, as VS Code input boxes, pickers and error messages; `editing`: a saved endpoint's key is asked for again (and replaced). */
function compatUi(editing: boolean): ConnectCompatUi {
  const FAILURE: Record<string, FailureChoice> = { Retry: 'retry', Edit: 'edit', 'Use Anyway': 'useAnyway' };
  return {
    askUrl: async (value, check) => (await vscode.window.showInputBox({
      title: 'Vox: OpenAI-compatible server — base URL', prompt: 'Its base URL (usually ending in /v1)', value,
      placeHolder: 'http://127.0.0.1:8000/v1', ignoreFocusOut: true, validateInput: (v) => check(v),
    }))?.trim(),
    askName: async (value, check) => (await vscode.window.showInputBox({
      title: 'Vox: OpenAI-compatible server — name', prompt: 'A name for this endpoint, shown with its models (default: its host:port)', value,
      ignoreFocusOut: true, validateInput: (v) => check(v),
    }))?.trim(),
    askKey: async (endpoint) => (await vscode.window.showInputBox({
      title: `Vox: ${endpoint} — API key`,
      prompt: `Its API key — tested first, then kept in VS Code SecretStorage for this endpoint only${editing ? ', in place of the saved one' : ''} (leave empty if it needs none)`,
      password: true, ignoreFocusOut: true,
    }))?.trim(),
    pickModel: async (models, endpoint) => {
      const TYPE = '$(edit) Type a model name…';
      const items: (vscode.QuickPickItem & { model?: string })[] = models.map((m) => ({ label: m.id, model: m.id, description: endpoint, ...(m.label ? { detail: m.label } : {}) }));
      items.push({ label: TYPE, alwaysShow: true });
      const pick = await vscode.window.showQuickPick(items, { title: `Vox: models at ${endpoint}`, ignoreFocusOut: true, placeHolder: models.length ? 'Pick one to test and use' : 'No model list: type the model name' });
      if (!pick) return undefined;
      return pick.model ?? ((await vscode.window.showInputBox({ title: `Vox: ${endpoint} — model`, prompt: 'Model name as the server knows it', ignoreFocusOut: true }))?.trim() || undefined);
    },
    failed: async (message) => {
      const choice = await vscode.window.showErrorMessage(`Vox: ${message} Nothing was saved.`, 'Retry', 'Edit', 'Use Anyway', 'Cancel');
      return choice ? FAILURE[choice] ?? 'cancel' : 'cancel';
    },
  };
}
