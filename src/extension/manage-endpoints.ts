/**
 * "Vox: Manage Model Endpoints…": the named OpenAI-compatible endpoints, listed with the one the
 * default model is on, each to rename (the new name checked as it is typed, protocol
 * `checkCompatEndpoint`, then `renameCompatEndpoint`), to edit (its URL and key, through the
 * save-after-test connect flow) or to remove (asked first, saying when the default model is on
 * it; `removeCompatEndpoint` deletes its key and answers the model it fell back to, which is
 * told). The list is shown again after each change until the user closes it. No `vscode` here:
 * the UI is passed in (manage-endpoints-ui.ts gives VS Code's), so the flow runs against a real
 * engine in tests.
 */
import { ClientError, type EngineClient } from '../client/engine-client';
import type { CompatEndpointView, EndpointEditView } from '../protocol/commands/models';

/** An endpoint as listed: `current` when the default model is on it. */
export interface ListedEndpoint extends CompatEndpointView {
  current: boolean;
}

export type ManageChoice = { action: 'rename' | 'remove' | 'edit'; endpoint: string } | { action: 'add' };

export interface ManageEndpointsUi {
  /** The list; undefined closes it. `model` is the default model. */
  pick(endpoints: ListedEndpoint[], model: string): Promise<ManageChoice | undefined>;
  /** The new name, `value` the old one (`check` answers a problem, or undefined when the text is fine). */
  askName(value: string, check: (text: string) => Promise<string | undefined>): Promise<string | undefined>;
  /** Whether to remove `endpoint`; `message` says what goes (and that the default model is on it). */
  confirmRemove(endpoint: ListedEndpoint, message: string): Promise<boolean>;
  /** What was done. */
  tell(message: string): void;
  /** A command that failed, with the engine's message. */
  failed(message: string): void;
}

export interface ManageEndpointsHooks {
  /** Edits an endpoint's URL and key (or, without one, adds an endpoint): the connect flow. */
  edit(endpoint: CompatEndpointView | undefined): Promise<void>;
}

function describe(e: unknown): string {
  return e instanceof ClientError || e instanceof Error ? e.message : String(e);
}

/** Which endpoint serves the default model: the named one of `compat:<name>/<model>`, else the first for a plain `compat:<model>`. */
function endpointOfModel(model: string, endpoints: CompatEndpointView[]): string | undefined {
  if (!model.startsWith('compat:')) return undefined;
  const rest = model.slice('compat:'.length);
  const slash = rest.indexOf('/');
  const named = slash > 0 ? endpoints.find((e) => e.name === rest.slice(0, slash)) : undefined;
  return (named ?? endpoints[0])?.name;
}

/** The sentence for the model after an edit. */
function modelSentence(edit: EndpointEditView, removed: boolean): string {
  if (!edit.model) return '';
  return removed
    ? ` The model ${edit.model.was} was on it — now using ${edit.model.now}.`
    : ` The model is now ${edit.model.now}.`;
}

/** The whole flow; ends when the user closes the list. */
export async function manageEndpoints(client: EngineClient, ui: ManageEndpointsUi, hooks: ManageEndpointsHooks): Promise<void> {
  for (;;) {
    const [{ endpoints }, settings] = await Promise.all([client.call('listCompatEndpoints', {}), client.call('getSettings', {})]);
    const on = endpointOfModel(settings.model, endpoints);
    const listed = endpoints.map((e) => ({ ...e, current: e.name === on }));
    const choice = await ui.pick(listed, settings.model);
    if (!choice) return;
    if (choice.action === 'add') {
      await hooks.edit(undefined);
      continue;
    }
    const endpoint = listed.find((e) => e.name === choice.endpoint);
    if (!endpoint) continue;
    try {
      if (choice.action === 'edit') await hooks.edit(endpoint);
      else if (choice.action === 'rename') await rename(client, ui, endpoint);
      else await remove(client, ui, endpoint, settings.model);
    } catch (e) {
      ui.failed(describe(e));
    }
  }
}

async function rename(client: EngineClient, ui: ManageEndpointsUi, endpoint: ListedEndpoint): Promise<void> {
  const check = async (text: string): Promise<string | undefined> => {
    try {
      await client.call('checkCompatEndpoint', { baseUrl: endpoint.baseUrl, name: text.trim(), replacing: endpoint.name });
      return undefined;
    } catch (e) {
      return describe(e);
    }
  };
  const typed = await ui.askName(endpoint.name, check);
  if (typed === undefined || typed.trim() === endpoint.name) return;
  const edit = await client.call('renameCompatEndpoint', { name: endpoint.name, newName: typed });
  ui.tell(`Vox: renamed "${endpoint.name}" to "${edit.endpoint.name}"; its key moved with it.${modelSentence(edit, false)}`);
}

async function remove(client: EngineClient, ui: ManageEndpointsUi, endpoint: ListedEndpoint, model: string): Promise<void> {
  const uses = endpoint.current ? ` The model ${model} uses it; Vox will switch to your most recent other model.` : '';
  if (!(await ui.confirmRemove(endpoint, `Remove the endpoint "${endpoint.name}" (${endpoint.baseUrl}) and its saved API key?${uses}`))) return;
  const edit = await client.call('removeCompatEndpoint', { name: endpoint.name });
  ui.tell(`Vox: removed "${endpoint.name}" and its key.${modelSentence(edit, true)}`);
}
