/**
 * Resolves @-mentions into the text attached to a prompt, within named limits. Every mention
 * gives one `ResolvedMention` (../../protocol/mentions.ts): either its text (`ok`, or `truncated`
 * with a note of what was cut) or a `warning` saying why nothing was attached — a missing file, a
 * binary or special file, a path or symlink leading out of the workspace (the tools' confined
 * fs decides), no selection, a host that has no terminal. Nothing is dropped silently.
 */
import { parseMcpMentionTarget, splitContext, type ContextChip, type Mention, type ResolvedMention } from '../../protocol/mentions';
import { git } from '../git/git';
import { normalizeTerminalOutput } from '../terminal/normalize';
import { VoxError } from '../../protocol/wire/vox-error';
import type { MentionSources } from '../host';
import type { VoxStore } from '../store/store';
import { openInWorkspace, specialFileMessage } from '../tools/confined-fs';
import { BINARY_SNIFF_BYTES, binaryReason, cutText } from '../tools/text';
import type { WorkspaceFiles } from './workspace-files';

/** Most characters one mention attaches (more is cut, and the chip says so). */
export const MENTION_MAX_CHARS = 40_000;
/** Most characters all mentions of one prompt attach together. */
export const MENTIONS_TOTAL_MAX_CHARS = 160_000;
/** Bytes read of a file for one mention (UTF-8 is at most 4 bytes a character). */
export const MENTION_FILE_READ_BYTES = MENTION_MAX_CHARS * 4;
/** Paths listed for a folder mention. */
export const MENTION_FOLDER_MAX_ENTRIES = 500;
/** Latest messages of a past thread attached by a thread mention. */
export const MENTION_THREAD_MAX_MESSAGES = 20;

export interface ResolveDeps {
  workspaceRoot: string;
  files: WorkspaceFiles;
  store: VoxStore;
  sources: MentionSources | undefined;
  /** Tokens of an attached text (the model's tokenizer or the approximation). */
  count: (text: string) => Promise<number>;
  /** Reads an MCP server's resource (../mcp/); absent: MCP mentions are a warning. */
  readMcpResource?: (server: string, uri: string) => Promise<{ text: string; truncated: boolean; mimeType: string | null }>;
}

type Outcome = { label: string; text: string; truncated?: boolean } | { label: string; warning: string };

const warn = (label: string, warning: string): Outcome => ({ label, warning });

function cut(label: string, text: string, max: number): Outcome {
  if (text.length <= max) return { label, text };
  return { label, text: `${cutText(text, max)}\n[… ${text.length - max} more characters not attached]`, truncated: true };
}

async function resolveFile(deps: ResolveDeps, target: string): Promise<Outcome> {
  let opened;
  try {
    opened = await openInWorkspace(deps.workspaceRoot, target);
  } catch (e) {
    return warn(target, e instanceof VoxError ? e.message : `Cannot read ${target}`);
  }
  const { resolved, entry } = opened;
  const label = resolved.relative;
  if (entry.kind === 'missing') return warn(label, `File not found: ${label}`);
  if (entry.kind === 'special') return warn(label, specialFileMessage(label, entry.stat));
  if (entry.kind === 'directory') {
    await entry.dir.close();
    return resolveFolder(deps, label);
  }
  try {
    const size = entry.stat.size;
    const buf = Buffer.alloc(Math.min(size, MENTION_FILE_READ_BYTES));
    const { bytesRead } = await entry.handle.read(buf, 0, buf.length, 0);
    const data = buf.subarray(0, bytesRead);
    const binary = binaryReason(data.subarray(0, BINARY_SNIFF_BYTES));
    if (binary !== undefined) return warn(label, `${label} is a binary file (${binary}; ${size} bytes): not attached`);
    let text = data.toString('utf8');
    if (text.startsWith('\uFEFF')) text = text.slice(1);
    const out = cut(label, text, MENTION_MAX_CHARS);
    if (size > bytesRead && 'text' in out && !out.truncated) {
      return { label, text: `${out.text}\n[… the file has ${size} bytes; only the first ${bytesRead} are attached]`, truncated: true };
    }
    return out;
  } finally {
    await entry.handle.close();
  }
}

async function resolveFolder(deps: ResolveDeps, target: string): Promise<Outcome> {
  const dir = target.replace(/\/+$/, '') || '.';
  const listing = await deps.files.list();
  const prefix = dir === '.' ? '' : `${dir}/`;
  const under = listing.files.filter((f) => f.startsWith(prefix));
  if (under.length === 0) {
    // Not in the (.gitignore-aware) listing: missing, or everything in it is ignored.
    let opened;
    try {
      opened = await openInWorkspace(deps.workspaceRoot, dir);
    } catch (e) {
      return warn(`${dir}/`, e instanceof VoxError ? e.message : `Cannot read ${dir}`);
    }
    if (opened.entry.kind === 'directory') await opened.entry.dir.close();
    if (opened.entry.kind === 'file') await opened.entry.handle.close();
    if (opened.entry.kind === 'missing') return warn(`${dir}/`, `Folder not found: ${dir}`);
    if (opened.entry.kind !== 'directory') return warn(`${dir}/`, `${dir} is not a folder`);
    return warn(`${dir}/`, `${dir}/ has no files that are not ignored`);
  }
  const shown = under.slice(0, MENTION_FOLDER_MAX_ENTRIES);
  const more = under.length - shown.length;
  const text = `Files in ${dir}/ (${under.length}${listing.gitignoreAware ? ', .gitignore applied' : ''}):\n${shown.join('\n')}${more > 0 ? `\n[… ${more} more files not listed]` : ''}`;
  return { label: `${dir}/`, text, ...(more > 0 ? { truncated: true } : {}) };
}

/** A commit-ish a user may name: hex, or a ref name; never an option. */
const COMMIT_RE = /^(?!-)[A-Za-z0-9._/~^-]{1,200}$/;

async function resolveGit(deps: ResolveDeps, target: string | undefined): Promise<Outcome> {
  const cwd = deps.workspaceRoot;
  if (target === undefined || target === '') {
    const label = 'git';
    try {
      const [diff, untracked] = await Promise.all([
        git(['-c', 'core.quotepath=off', 'diff', 'HEAD', '--no-color', '--no-ext-diff'], { cwd }),
        git(['ls-files', '--others', '--exclude-standard'], { cwd }),
      ]);
      const extra = untracked.trim() ? `\nUntracked files:\n${untracked.trim()}` : '';
      if (!diff.trim() && !extra) return warn(label, 'The working tree has no changes against HEAD');
      return cut(label, `git diff HEAD:\n${diff}${extra}`, MENTION_MAX_CHARS);
    } catch (e) {
      return warn(label, `git diff failed: ${e instanceof VoxError ? e.message : 'is this a git repository with a commit?'}`);
    }
  }
  const label = `git:${target}`;
  if (!COMMIT_RE.test(target)) return warn(label, `"${target}" is not a commit name`);
  try {
    const show = await git(['-c', 'core.quotepath=off', 'show', '--no-color', '--no-ext-diff', '--stat', '--patch', target, '--'], { cwd });
    return cut(label, show, MENTION_MAX_CHARS);
  } catch {
    return warn(label, `No commit ${target} in this repository`);
  }
}

function resolveThread(deps: ResolveDeps, target: string): Outcome {
  if (!deps.store.hasThread(target)) return warn(`thread ${target}`, `Thread ${target} does not exist`);
  const t = deps.store.getThread(target);
  const msgs = deps.store.activePath(target).filter((m) => m.role !== 'system').slice(-MENTION_THREAD_MAX_MESSAGES);
  if (msgs.length === 0) return warn(t.title, `Thread "${t.title}" has no messages`);
  const text = msgs.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.role === 'user' ? splitContext(m.content).prompt : m.content}`).join('\n\n');
  return cut(t.title, `Earlier thread "${t.title}":\n${text}`, MENTION_MAX_CHARS);
}

async function resolveOne(deps: ResolveDeps, m: Mention): Promise<Outcome> {
  const src = deps.sources;
  switch (m.kind) {
    case 'file':
      return m.target ? resolveFile(deps, m.target) : warn('file', 'A file mention needs a path');
    case 'folder':
      return m.target ? resolveFolder(deps, m.target) : warn('folder', 'A folder mention needs a path');
    case 'git':
      return resolveGit(deps, m.target);
    case 'thread':
      return m.target ? resolveThread(deps, m.target) : warn('thread', 'A thread mention needs a thread id');
    case 'problems': {
      if (!src?.problems) return warn('problems', 'Workspace problems come from the editor; this host has none');
      const text = await src.problems();
      return text.trim() ? cut('problems', `Workspace problems:\n${text}`, MENTION_MAX_CHARS) : warn('problems', 'The workspace has no problems');
    }
    case 'terminal': {
      if (!src?.terminal) return warn('terminal', 'Terminal output comes from the editor; this host has none');
      const raw = await src.terminal();
      const t = raw && { name: raw.name, text: normalizeTerminalOutput(raw.text) };
      if (!t || !t.text.trim()) return warn('terminal', 'No terminal output yet (open a terminal with shell integration and run a command)');
      // The end of the output matters most: cut from the front.
      const text = t.text.length > MENTION_MAX_CHARS ? `[… ${t.text.length - MENTION_MAX_CHARS} earlier characters not attached]\n${t.text.slice(-MENTION_MAX_CHARS)}` : t.text;
      return { label: `terminal: ${t.name}`, text: `Output of terminal "${t.name}":\n${text}`, ...(t.text.length > MENTION_MAX_CHARS ? { truncated: true } : {}) };
    }
    case 'mcp': {
      const ref = m.target ? parseMcpMentionTarget(m.target) : null;
      if (!ref) return warn('mcp', 'An MCP mention needs <server>/<uri>');
      const label = `${ref.server}: ${ref.uri}`;
      if (!deps.readMcpResource) return warn(label, 'MCP resources are not available in this host');
      const r = await deps.readMcpResource(ref.server, ref.uri);
      const out = cut(label, `MCP resource ${ref.uri} of server ${ref.server}${r.mimeType ? ` (${r.mimeType})` : ''}:\n${r.text}`, MENTION_MAX_CHARS);
      return r.truncated && 'text' in out ? { ...out, truncated: true } : out;
    }
    case 'selection': {
      if (!src?.selection) return warn('selection', 'The selection comes from the editor; this host has none');
      const s = await src.selection();
      if (!s || !s.text) return warn('selection', 'Nothing is selected in the editor');
      return cut(`${s.path}:${s.startLine}-${s.endLine}`, `Selection in ${s.path}, lines ${s.startLine}-${s.endLine}:\n${s.text}`, MENTION_MAX_CHARS);
    }
  }
}

/** Resolves every mention in order; the total limit cuts the later ones (and says so). */
export async function resolveMentions(deps: ResolveDeps, mentions: readonly Mention[]): Promise<ResolvedMention[]> {
  const out: ResolvedMention[] = [];
  let budget = MENTIONS_TOTAL_MAX_CHARS;
  for (const m of mentions) {
    let o: Outcome;
    try {
      o = await resolveOne(deps, m);
    } catch (e) {
      o = warn(m.target ?? m.kind, e instanceof VoxError ? e.message : `Could not resolve @${m.kind}`);
    }
    const base = { kind: m.kind, target: m.target ?? null, label: o.label };
    if ('warning' in o) {
      out.push({ chip: { ...base, tokens: 0, status: 'warning', warning: o.warning }, text: '' });
      continue;
    }
    if (budget <= 0) {
      out.push({ chip: { ...base, tokens: 0, status: 'warning', warning: `Not attached: the prompt's mentions are over their limit of ${MENTIONS_TOTAL_MAX_CHARS} characters` }, text: '' });
      continue;
    }
    let { text } = o;
    let truncated = o.truncated === true;
    if (text.length > budget) {
      text = `${cutText(text, budget)}\n[… cut: the prompt's mentions are limited to ${MENTIONS_TOTAL_MAX_CHARS} characters]`;
      truncated = true;
    }
    budget -= text.length;
    const chip: ContextChip = { ...base, tokens: await deps.count(text), status: truncated ? 'truncated' : 'ok', warning: truncated ? 'Cut to fit the mention limits' : null };
    out.push({ chip, text });
  }
  return out;
}
