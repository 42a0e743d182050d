/**
 * The composer's MCP parts: the servers as the engine lists them
 * (listMcpServers, then every `mcpServers` update of watchMcpServers), the slash menu — `/compact`
 * and each connected server's prompts as `/mcp.<server>.<prompt>` — the inline form that asks
 * a prompt's arguments, and the expansion (getMcpPrompt) that replaces the slash command in the
 * draft with the prompt's text (the @-popup's MCP resources come from the engine:
 * ./mcp-mentions.ts). Plain TypeScript like the controller: it mutates `model` and sends
 * commands through the host it is given; tests drive it directly.
 */
import type { ClientCommand, CommandResult } from '../../../src/protocol/commands/index';
import { MAX_PROMPT_CHARS } from '../../../src/protocol/commands/index';
import type { McpServerListView, McpServerView } from '../../../src/protocol/commands/mcp';
import { mcpSlashName } from './mcp-names';

/** Rows the slash menu shows at most. */
export const SLASH_MENU_ROWS = 12;
/** Longest argument value the form sends (MCP prompt arguments are strings). */
export const MAX_PROMPT_ARGUMENT_CHARS = 10_000;

type McpPromptView = McpServerView['prompts'][number];

export type SlashItem =
  | { kind: 'builtin'; name: string; description: string }
  | { kind: 'mcp'; name: string; server: string; prompt: McpPromptView; description: string };

/** Commands of Vox itself that the menu also offers (typed as the whole prompt). */
export const BUILTIN_SLASH: readonly SlashItem[] = [
  { kind: 'builtin', name: 'compact', description: 'Summarise this thread so the model sees the summary instead of the messages' },
];

export interface PromptFormField { name: string; description: string | null; required: boolean; value: string; error: string | null }

export interface PromptForm {
  server: string;
  prompt: string;
  description: string | null;
  fields: PromptFormField[];
  /** The getMcpPrompt on its way (null: not sent yet). */
  requestId: string | null;
  /** Why the last expansion failed, in words. */
  error: string | null;
}

export interface McpModel {
  servers: McpServerView[];
  configErrors: McpServerListView['configErrors'];
  /** The open slash menu (null: closed). */
  slash: { query: string; items: SlashItem[]; selected: number } | null;
  /** The argument form of the prompt being expanded (null: none). */
  form: PromptForm | null;
  /** A prompt without arguments being expanded (its command stays in the draft until the text comes). */
  expanding: { requestId: string; command: string } | null;
}

export function createMcpModel(): McpModel {
  return { servers: [], configErrors: [], slash: null, form: null, expanding: null };
}

export interface McpHost {
  send(command: ClientCommand): string;
  draft(): string;
  setDraft(text: string): void;
  notify(code: string, message: string): void;
}

/** The slash command being typed: the draft starts with `/` and the caret is still in that first word. */
export function slashQueryAt(text: string, caret: number): string | null {
  const m = /^\/(\S*)$/.exec(text.slice(0, caret));
  return m ? m[1]! : null;
}

/** What the menu offers for `query` (case-insensitive; names starting with it first). */
export function slashItems(servers: readonly McpServerView[], query: string): SlashItem[] {
  const all: SlashItem[] = [...BUILTIN_SLASH];
  for (const s of servers) {
    if (!s.enabled || s.status !== 'connected') continue;
    for (const p of s.prompts) all.push({ kind: 'mcp', name: mcpSlashName(s.name, p.name), server: s.name, prompt: p, description: p.description ?? `prompt of ${s.name}` });
  }
  const q = query.toLowerCase();
  const starts = all.filter((i) => i.name.toLowerCase().startsWith(q));
  const contains = all.filter((i) => !i.name.toLowerCase().startsWith(q) && i.name.toLowerCase().includes(q));
  return [...starts, ...contains].slice(0, SLASH_MENU_ROWS);
}

/** The draft with its leading `/command` word replaced by `text`. */
function replaceCommand(draft: string, command: string, text: string): string {
  const lead = `/${command}`;
  if (draft.startsWith(lead) && (draft.length === lead.length || /\s/.test(draft[lead.length]!))) return `${text}${draft.slice(lead.length)}`;
  return draft.length > 0 ? `${text}\n${draft}` : text;
}

export class McpController {
  constructor(readonly model: McpModel, private readonly host: McpHost) {}

  /** Lists the servers and subscribes to their updates (again after a new engine session). */
  start(): void {
    this.host.send({ type: 'listMcpServers' });
    this.host.send({ type: 'watchMcpServers' });
  }

  onServers(view: McpServerListView): void {
    this.model.servers = view.servers;
    this.model.configErrors = view.configErrors;
    if (this.model.slash) this.model.slash = { ...this.model.slash, items: slashItems(view.servers, this.model.slash.query), selected: 0 };
  }

  /** The draft changed: opens, narrows or closes the slash menu. */
  onDraftInput(text: string, caret: number): void {
    const q = slashQueryAt(text, caret);
    if (q === null || this.model.form) {
      this.model.slash = null;
      return;
    }
    if (this.model.slash?.query === q) return;
    this.model.slash = { query: q, items: slashItems(this.model.servers, q), selected: 0 };
  }

  /**
   * Keys while the menu is open; true when used. Enter/Tab with no match fall through (the prompt
   * is sent as typed), and so does Enter on a built-in typed in full (`/compact` + Enter compacts).
   */
  onKey(key: string): boolean {
    const s = this.model.slash;
    if (!s) return false;
    if (key === 'Escape') {
      this.model.slash = null;
      return true;
    }
    if (s.items.length === 0) return false;
    if (key === 'ArrowDown') s.selected = (s.selected + 1) % s.items.length;
    else if (key === 'ArrowUp') s.selected = (s.selected - 1 + s.items.length) % s.items.length;
    else if (key === 'Enter' && s.items[s.selected]?.kind === 'builtin' && s.items[s.selected]!.name === s.query) {
      this.model.slash = null; // `/compact` typed in full: Enter runs it as before (the composer sends it)
      return false;
    } else if (key === 'Enter' || key === 'Tab') return this.accept(s.selected);
    else return false;
    return true;
  }

  /** Takes a row: a built-in becomes the draft; a prompt with arguments opens the form, one without is expanded. */
  accept(index: number): boolean {
    const item = this.model.slash?.items[index];
    if (!item) return false;
    this.model.slash = null;
    const rest = this.host.draft().replace(/^\/\S*/, '');
    this.host.setDraft(`/${item.name}${rest}`);
    if (item.kind === 'builtin') return true;
    if (item.prompt.arguments.length === 0) {
      const requestId = this.host.send({ type: 'getMcpPrompt', server: item.server, name: item.prompt.name });
      this.model.expanding = { requestId, command: item.name };
      return true;
    }
    this.model.form = {
      server: item.server,
      prompt: item.prompt.name,
      description: item.prompt.description,
      fields: item.prompt.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required, value: '', error: null })),
      requestId: null,
      error: null,
    };
    return true;
  }

  /** The form's Insert: checks the required fields, then asks the engine for the text. */
  submitForm(): boolean {
    const f = this.model.form;
    if (!f || f.requestId !== null) return false;
    let ok = true;
    for (const field of f.fields) {
      field.error = field.required && field.value.trim() === '' ? 'required' : field.value.length > MAX_PROMPT_ARGUMENT_CHARS ? `at most ${MAX_PROMPT_ARGUMENT_CHARS} characters` : null;
      if (field.error) ok = false;
    }
    if (!ok) return false;
    const args = Object.fromEntries(f.fields.filter((x) => x.value !== '').map((x) => [x.name, x.value]));
    f.error = null;
    f.requestId = this.host.send({ type: 'getMcpPrompt', server: f.server, name: f.prompt, arguments: args });
    return true;
  }

  /** Closes the form; the draft keeps the slash command as typed. */
  cancelForm(): void {
    this.model.form = null;
  }

  private insert(command: string, text: string): void {
    if (text.length > MAX_PROMPT_CHARS) {
      this.host.notify('promptTooLong', `/${command} expands to ${text.length} characters; a prompt may have ${MAX_PROMPT_CHARS}.`);
      return;
    }
    this.host.setDraft(replaceCommand(this.host.draft(), command, text));
  }

  /** An answer to one of our requests; false when it is not ours. */
  onResult(requestId: string | undefined, type: string, value: unknown): boolean {
    if (type === 'listMcpServers') {
      this.onServers(value as CommandResult<'listMcpServers'>);
      return true;
    }
    if (type === 'watchMcpServers') return true;
    if (type !== 'getMcpPrompt') return false;
    const { text } = value as CommandResult<'getMcpPrompt'>;
    const f = this.model.form;
    if (f && f.requestId === requestId) {
      this.model.form = null;
      this.insert(mcpSlashName(f.server, f.prompt), text);
    } else {
      const e = this.model.expanding;
      if (e?.requestId !== requestId || !e) return true; // stale
      this.model.expanding = null;
      this.insert(e.command, text);
    }
    return true;
  }

  /** A failed request of ours: shown in the form, or as a notice; false when not ours. */
  onError(requestId: string | undefined, type: string, message: string): boolean {
    if (type === 'listMcpServers' || type === 'watchMcpServers') return true; // no MCP client: no prompts, no notice
    if (type !== 'getMcpPrompt') return false;
    const f = this.model.form;
    if (f && f.requestId === requestId) {
      f.requestId = null;
      f.error = message;
    } else if (this.model.expanding?.requestId === requestId) {
      this.model.expanding = null;
      this.host.notify('mcpPrompt', message);
    }
    return true;
  }
}
