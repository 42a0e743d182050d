/**
 * MCP server definitions (SPEC 5.3): the pure parsers of the four places a user
 * configures servers, and their merge. Precedence (Vox's own first): `.vox/mcp.json` beats
 * `.vscode/mcp.json` beats `.mcp.json` beats the setting `vox.mcp.servers`; a server of the same
 * name in a later place is shadowed (reported, not started). Formats:
 *  - `.vox/mcp.json` and the setting: Claude Code's shape `{"mcpServers": {name: {...}}}` (the
 *    setting holds the inner object), with `${VAR}`, `${VAR:-default}`, `${env:VAR}` and
 *    `${workspaceFolder}`;
 *  - `.vscode/mcp.json`: VS Code's `{"servers": {name: {type, command, args, env, envFile, cwd} |
 *    {type: http|sse, url, headers}}, "inputs": [...]}`, JSON with comments and trailing commas,
 *    `${workspaceFolder}`, `${userHome}` and `${env:VAR}`; `${input:…}` is not supported (a clear
 *    error for that server);
 *  - `.mcp.json`: Claude Code's `{"mcpServers": {...}}`, `${VAR}` / `${VAR:-default}`.
 * Every bad file or entry becomes a `configErrors` entry (McpError `invalidConfig`); the rest is used.
 * The only I/O is `loadMcpConfig` (reads the files) and the injected `readEnvFile`.
 */
import fs from 'node:fs';
import { QUOTED_COMMAND_CHARS, QUOTED_INPUT_CHARS, QUOTED_NAME_CHARS, QUOTED_VALUE_CHARS, quote } from '../../protocol/wire/quote';
import os from 'node:os';
import path from 'node:path';
import { MAX_MCP_NAME_CHARS } from '../../protocol/commands/mcp';
import { McpError } from './errors';

/** Largest config file read (a bigger one is an error, not a partial read). */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Most servers taken from one place (the rest are reported). */
export const MAX_SERVERS_PER_SOURCE = 100;
/** Most arguments of one stdio server. */
export const MAX_SERVER_ARGS = 200;

export type McpSource = 'vox' | 'vscode' | 'claude' | 'settings';

/** The files read, in precedence order (first wins). */
export const MCP_CONFIG_FILES: ReadonlyArray<{ source: Exclude<McpSource, 'settings'>; path: string }> = [
  { source: 'vox', path: '.vox/mcp.json' },
  { source: 'vscode', path: '.vscode/mcp.json' },
  { source: 'claude', path: '.mcp.json' },
];
export const SETTINGS_SOURCE_PATH = 'settings (vox.mcp.servers)';

interface SpecBase { name: string; source: McpSource; sourcePath: string }
export type McpServerSpec =
  | (SpecBase & { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string | null })
  | (SpecBase & { transport: 'http' | 'sse'; url: string; headers: Record<string, string> });

export interface McpConfigError { source: string; message: string }

export interface ParsedSource { servers: McpServerSpec[]; errors: McpConfigError[] }

export interface McpConfig {
  servers: McpServerSpec[];
  /** Servers hidden by one of the same name in a place that wins. */
  shadowed: Array<{ name: string; sourcePath: string; by: string }>;
  configErrors: McpConfigError[];
}

export interface ParseContext {
  workspaceRoot: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Reads a VS Code `envFile` (absolute path) as KEY=VALUE pairs; throws when it cannot. */
  readEnvFile?: (absPath: string) => Record<string, string>;
  home?: string;
}

/** Strips `//` and `/* *\/` comments and trailing commas outside strings (VS Code reads mcp.json as JSONC). */
export function stripJsonc(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') i++;
      else { out += c; i++; }
    } else { out += c; i++; }
  }
  return out;
}

function invalid(sourcePath: string, at: string | null, message: string): McpConfigError {
  return { source: at ? `${sourcePath}: ${at}` : sourcePath, message: new McpError('invalidConfig', message).message };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Expand = (s: string) => string;

/** A per-server failure of substitution or shape (caught by the entry's parser). */
class EntryError extends Error {}

function stringMap(v: unknown, field: string, expand: Expand): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new EntryError(`"${field}" must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') throw new EntryError(`"${field}.${k}" must be a string`);
    out[k] = expand(String(val));
  }
  return out;
}

function stringList(v: unknown, field: string, expand: Expand): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((a) => typeof a !== 'string' && typeof a !== 'number')) throw new EntryError(`"${field}" must be an array of strings`);
  if (v.length > MAX_SERVER_ARGS) throw new EntryError(`"${field}" has more than ${MAX_SERVER_ARGS} entries`);
  return v.map((a) => expand(String(a)));
}

function checkUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new EntryError(`"url" is not a valid URL (${quote(raw, QUOTED_INPUT_CHARS)})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new EntryError(`"url" must be http or https, not ${u.protocol}`);
  return u.toString();
}

/** One server entry (both formats share the fields; `vscode` adds envFile and cwd, and wants `type` for remote servers). */
function parseEntry(name: string, raw: unknown, base: SpecBase, expand: Expand, ctx: ParseContext, vscode: boolean): McpServerSpec {
  if (!isObject(raw)) throw new EntryError('a server must be an object');
  const type = raw.type ?? (typeof raw.url === 'string' && raw.command === undefined ? 'http' : 'stdio');
  if (type === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') throw new EntryError('a stdio server needs a "command" string');
    const env = stringMap(raw.env, 'env', expand);
    let fileEnv: Record<string, string> = {};
    if (vscode && raw.envFile !== undefined) {
      if (typeof raw.envFile !== 'string') throw new EntryError('"envFile" must be a string');
      const file = path.resolve(ctx.workspaceRoot, expand(raw.envFile));
      if (!ctx.readEnvFile) throw new EntryError('"envFile" cannot be read here');
      try {
        fileEnv = ctx.readEnvFile(file);
      } catch (e) {
        throw new EntryError(`"envFile" ${raw.envFile} could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    let cwd: string | null = null;
    if (raw.cwd !== undefined) {
      if (typeof raw.cwd !== 'string') throw new EntryError('"cwd" must be a string');
      cwd = path.resolve(ctx.workspaceRoot, expand(raw.cwd));
    }
    return { ...base, transport: 'stdio', command: expand(raw.command), args: stringList(raw.args, 'args', expand), env: { ...fileEnv, ...env }, cwd };
  }
  if (type === 'http' || type === 'sse' || type === 'streamable-http') {
    if (typeof raw.url !== 'string') throw new EntryError(`a ${String(type)} server needs a "url" string`);
    return { ...base, transport: type === 'sse' ? 'sse' : 'http', url: checkUrl(expand(raw.url)), headers: stringMap(raw.headers, 'headers', expand) };
  }
  throw new EntryError(`unknown "type" ${quote(JSON.stringify(type) ?? String(type), QUOTED_VALUE_CHARS)} (stdio, http or sse)`);
}

function parseServers(servers: unknown, field: string, source: McpSource, sourcePath: string, ctx: ParseContext, expand: Expand, vscode: boolean): ParsedSource {
  const out: ParsedSource = { servers: [], errors: [] };
  if (servers === undefined) return out;
  if (!isObject(servers)) {
    out.errors.push(invalid(sourcePath, field, `"${field}" must be an object of servers`));
    return out;
  }
  for (const [name, raw] of Object.entries(servers)) {
    if (out.servers.length >= MAX_SERVERS_PER_SOURCE) {
      out.errors.push(invalid(sourcePath, null, `more than ${MAX_SERVERS_PER_SOURCE} servers; the rest were skipped`));
      break;
    }
    if (name.length === 0 || name.length > MAX_MCP_NAME_CHARS || name.includes('/')) {
      out.errors.push(invalid(sourcePath, `${field}.${quote(name, QUOTED_NAME_CHARS)}`, `a server name must be 1..${MAX_MCP_NAME_CHARS} characters without "/"`));
      continue;
    }
    try {
      out.servers.push(parseEntry(name, raw, { name, source, sourcePath }, expand, ctx, vscode));
    } catch (e) {
      if (!(e instanceof EntryError)) throw e;
      out.errors.push(invalid(sourcePath, `${field}.${name}`, `server "${name}" was skipped: ${e.message}`));
    }
  }
  return out;
}

function parseJson(text: string, sourcePath: string, jsonc: boolean): { value: unknown } | { error: McpConfigError } {
  try {
    return { value: JSON.parse(jsonc ? stripJsonc(text) : text) as unknown };
  } catch (e) {
    return { error: invalid(sourcePath, null, `not valid JSON${jsonc ? ' (comments allowed)' : ''}: ${quote((e as Error).message, QUOTED_INPUT_CHARS)}`) };
  }
}

/** `${VAR}`, `${VAR:-default}` (Claude Code), and `${env:VAR}` / `${workspaceFolder}` (Vox's file adds these). */
function claudeExpander(ctx: ParseContext, withVscodeForms: boolean): Expand {
  return (s) => s.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
    if (withVscodeForms && inner === 'workspaceFolder') return ctx.workspaceRoot;
    if (withVscodeForms && inner.startsWith('env:')) return ctx.env[inner.slice(4)] ?? '';
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s.exec(inner);
    if (!m) throw new EntryError(`unsupported variable ${quote(whole, QUOTED_VALUE_CHARS)}`);
    const value = ctx.env[m[1]!];
    if (value !== undefined && value !== '') return value;
    if (m[2] !== undefined) return m[2];
    throw new EntryError(`the environment variable ${m[1]} is not set (use \${${m[1]}:-default} for a default)`);
  });
}

/** VS Code's predefined variables that make sense outside an editor; `${input:…}` and the rest are refused. */
function vscodeExpander(ctx: ParseContext): Expand {
  return (s) => s.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
    if (inner === 'workspaceFolder' || inner === 'workspaceRoot') return ctx.workspaceRoot;
    if (inner === 'workspaceFolderBasename') return path.basename(ctx.workspaceRoot);
    if (inner === 'userHome') return ctx.home ?? os.homedir();
    if (inner === 'pathSeparator') return path.sep;
    if (inner.startsWith('env:')) return ctx.env[inner.slice(4)] ?? '';
    if (inner.startsWith('input:')) throw new EntryError(`${quote(whole, QUOTED_VALUE_CHARS)} asks VS Code for an input, which Vox does not support; write the value in "env" / "headers" or use \${env:NAME}`);
    throw new EntryError(`unsupported variable ${quote(whole, QUOTED_VALUE_CHARS)}`);
  });
}

/** `.vox/mcp.json` — `{"mcpServers": {...}}`. */
export function parseVoxConfig(text: string, ctx: ParseContext, sourcePath = '.vox/mcp.json'): ParsedSource {
  return parseMcpServersFile(text, ctx, 'vox', sourcePath, claudeExpander(ctx, true));
}

/** `.mcp.json` (Claude Code) — `{"mcpServers": {...}}`. */
export function parseClaudeConfig(text: string, ctx: ParseContext, sourcePath = '.mcp.json'): ParsedSource {
  return parseMcpServersFile(text, ctx, 'claude', sourcePath, claudeExpander(ctx, false));
}

function parseMcpServersFile(text: string, ctx: ParseContext, source: McpSource, sourcePath: string, expand: Expand): ParsedSource {
  const parsed = parseJson(text, sourcePath, source === 'vox');
  if ('error' in parsed) return { servers: [], errors: [parsed.error] };
  if (!isObject(parsed.value)) return { servers: [], errors: [invalid(sourcePath, null, 'the file must hold a JSON object {"mcpServers": {...}}')] };
  if (parsed.value.mcpServers === undefined) return { servers: [], errors: [invalid(sourcePath, null, 'no "mcpServers" object')] };
  return parseServers(parsed.value.mcpServers, 'mcpServers', source, sourcePath, ctx, expand, false);
}

/** `.vscode/mcp.json` — `{"servers": {...}, "inputs": [...]}`, JSONC. */
export function parseVscodeConfig(text: string, ctx: ParseContext, sourcePath = '.vscode/mcp.json'): ParsedSource {
  const parsed = parseJson(text, sourcePath, true);
  if ('error' in parsed) return { servers: [], errors: [parsed.error] };
  if (!isObject(parsed.value)) return { servers: [], errors: [invalid(sourcePath, null, 'the file must hold a JSON object {"servers": {...}}')] };
  if (parsed.value.servers === undefined) return { servers: [], errors: [invalid(sourcePath, null, 'no "servers" object')] };
  return parseServers(parsed.value.servers, 'servers', 'vscode', sourcePath, ctx, vscodeExpander(ctx), true);
}

/** The setting `vox.mcp.servers`: the inner `{name: {...}}` object (or a whole `{"mcpServers": …}`). */
export function parseSettingsServers(value: unknown, ctx: ParseContext): ParsedSource {
  if (value === undefined || value === null) return { servers: [], errors: [] };
  const inner = isObject(value) && isObject(value.mcpServers) && Object.keys(value).length === 1 ? value.mcpServers : value;
  return parseServers(inner, 'vox.mcp.servers', 'settings', SETTINGS_SOURCE_PATH, ctx, vscodeExpanderLenient(ctx), true);
}

/** Settings accept both families of variables (`${env:X}`, `${workspaceFolder}`, `${X:-d}`). */
function vscodeExpanderLenient(ctx: ParseContext): Expand {
  const claude = claudeExpander(ctx, false);
  const vscode = vscodeExpander(ctx);
  return (s) => s.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => (/^[A-Za-z_][A-Za-z0-9_]*(:-.*)?$/s.test(inner) && inner !== 'workspaceFolder' && inner !== 'userHome' ? claude(whole) : vscode(whole)));
}

/** Merges the places in precedence order (first wins); later duplicates are reported as shadowed. */
export function mergeMcpSources(ordered: readonly ParsedSource[]): McpConfig {
  const byName = new Map<string, McpServerSpec>();
  const shadowed: McpConfig['shadowed'] = [];
  const configErrors: McpConfigError[] = [];
  for (const src of ordered) {
    configErrors.push(...src.errors);
    for (const s of src.servers) {
      const first = byName.get(s.name);
      if (first) shadowed.push({ name: s.name, sourcePath: s.sourcePath, by: first.sourcePath });
      else byName.set(s.name, s);
    }
  }
  return { servers: [...byName.values()], shadowed, configErrors };
}

/** KEY=VALUE lines (`#` comments, optional `export `, quotes stripped), as VS Code's envFile. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    let v = m[2]!;
    if ((v.startsWith('"') && v.endsWith('"') && v.length >= 2) || (v.startsWith("'") && v.endsWith("'") && v.length >= 2)) v = v.slice(1, -1);
    out[m[1]!] = v;
  }
  return out;
}

function readBounded(abs: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
  if (!st.isFile()) throw new EntryError('not a regular file');
  if (st.size > MAX_CONFIG_FILE_BYTES) throw new EntryError(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
  return fs.readFileSync(abs, 'utf8');
}

/** Reads the three files of `workspaceRoot` and the setting, and merges them. */
export function loadMcpConfig(workspaceRoot: string, settingsServers: unknown, env: Readonly<Record<string, string | undefined>> = process.env): McpConfig {
  const ctx: ParseContext = {
    workspaceRoot, env,
    readEnvFile: (abs) => {
      const text = readBounded(abs);
      if (text === null) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return parseEnvFile(text);
    },
  };
  const parsers = { vox: parseVoxConfig, vscode: parseVscodeConfig, claude: parseClaudeConfig } as const;
  const sources: ParsedSource[] = [];
  for (const f of MCP_CONFIG_FILES) {
    let text: string | null;
    try {
      text = readBounded(path.join(workspaceRoot, f.path));
    } catch (e) {
      const why = e instanceof EntryError ? e.message : `could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
      sources.push({ servers: [], errors: [invalid(f.path, null, `the file ${why}`)] });
      continue;
    }
    if (text !== null) sources.push(parsers[f.source](text, ctx, f.path));
  }
  sources.push(parseSettingsServers(settingsServers, ctx));
  return mergeMcpSources(sources);
}

/** A command-line flag that names a credential (`--api-key`, `--token`); its value is never shown. */
const SECRET_FLAG = /^--?[\w-]*(token|key|secret|password|passwd|auth|credential)[\w-]*$/i;
const SECRET_FLAG_WITH_VALUE = /^(--?[\w-]*(?:token|key|secret|password|passwd|auth|credential)[\w-]*)=.+$/i;
/** An env or header name whose value is a credential. */
const SECRET_NAME = /token|key|secret|password|passwd|auth|credential|cookie/i;

/** The credential-looking values of a server's env, headers and args (redacted wherever Vox writes text). */
export function specSecrets(s: McpServerSpec): string[] {
  const pairs = Object.entries(s.transport === 'stdio' ? s.env : s.headers);
  const out = pairs.filter(([k]) => SECRET_NAME.test(k)).map(([, v]) => v.replace(/^(Bearer|Basic|Token)\s+/i, ''));
  if (s.transport === 'stdio') {
    s.args.forEach((a, i) => {
      const eq = SECRET_FLAG_WITH_VALUE.exec(a);
      if (eq) out.push(a.slice(eq[1]!.length + 1));
      else if (i > 0 && SECRET_FLAG.test(s.args[i - 1]!)) out.push(a);
    });
  }
  return out;
}

/** The command line or URL a list shows: header values and URL credentials/query values never appear. */
export function describeTarget(s: McpServerSpec): string {
  if (s.transport === 'stdio') {
    const shown = s.args.map((a, i) => {
      const eq = SECRET_FLAG_WITH_VALUE.exec(a);
      if (eq) return `${eq[1]}=…`;
      return i > 0 && SECRET_FLAG.test(s.args[i - 1]!) ? '…' : a;
    });
    return quote([s.command, ...shown].join(' '), QUOTED_COMMAND_CHARS);
  }
  try {
    const u = new URL(s.url);
    u.username = '';
    u.password = '';
    for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, '…');
    return u.toString();
  } catch {
    return s.url;
  }
}

/** Two specs start the same server (a reload keeps its connection when nothing changed). */
export function sameSpec(a: McpServerSpec, b: McpServerSpec): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
