/**
 * Tool calls written as text (SPEC 3.2), for models without native tool calling — or whose
 * provider reported none: `salvageToolCalls(text, toolNames)` finds them, checks them against the
 * active tools and returns the calls, the problems (each is reported to the model, never dropped)
 * and the text as the user sees it. Pure: no I/O, no engine state.
 *
 * Accepted shapes (and nothing else):
 *  1. A fenced tool block. The fence line opens with three or more backticks at the start of a
 *     line (up to 3 spaces of indent), then `tool:<name>`, then optional `key=value` pairs
 *     (value: a double-quoted JSON string, or a bare word read as JSON when it is a number,
 *     true/false/null, else as a string). The body is a JSON object (or nothing). The block ends
 *     at the first line, outside a JSON string, that is a fence of at least as many backticks —
 *     so a ``` inside a string value never closes it. Header and body keys merge; a key in both
 *     with different values is a conflict.
 *         ```tool:read_file path=src/a.ts
 *         ```
 *         ```tool:write_file
 *         {"path": "notes.md", "content": "# Notes\n```js\nx()\n```\n"}
 *         ```
 *  2. A bare JSON tool envelope: an object on lines of its own (or the whole body of a ```json
 *     or plain ``` fence) whose keys are exactly a name key and an arguments key, plus optionally
 *     `type` ("tool_call"/"function"/"tool_use") and `id`:
 *         {"name": N, "arguments": {…}}   (also "parameters"; "arguments" may be a JSON string)
 *         {"tool": N, "args": {…}}        (also "arguments", "input", "parameters")
 *         {"type": "tool_call", "name": N, "arguments": {…}}   (the local provider's protocol)
 *     Any other JSON — an object with other keys, an array, JSON inside a sentence or inside a
 *     code fence of another language — is text, not a call.
 *
 * Raw newlines and tabs inside JSON strings (weak models write code that way) are escaped before
 * parsing. Malformed blocks (bad JSON, a body that is not an object, an unknown tool, a header/
 * body conflict, an unclosed fence, a missing name) are problems. Well-formed calls are removed
 * from the displayed text (they show as tool calls); malformed blocks stay in it, so the user
 * sees what the model wrote.
 */
import { quoteLine } from '../../protocol/wire/quote';

/** Most calls salvaged from one model reply; more are reported to the model as not run. */
export const MAX_SALVAGED_CALLS = 16;

export type SalvageProblemCode = 'badJson' | 'notAnObject' | 'unknownTool' | 'conflict' | 'unclosed' | 'noName' | 'badHeader' | 'tooMany';

export interface SalvagedCall {
  name: string;
  /** The merged arguments, as JSON text (what a native call's `argumentsJson` would be). */
  argumentsJson: string;
  source: 'fence' | 'json';
  /** The block's range in the text ([start, end), whole lines). */
  start: number;
  end: number;
}

export interface SalvageProblem {
  code: SalvageProblemCode;
  /** A ```tool: block, or a bare JSON envelope. */
  source: 'fence' | 'json';
  /** How the block began, for the model: "```tool:read_file" or the envelope's first characters. */
  label: string;
  /** A sentence for the model: what was wrong and what to do. */
  message: string;
  start: number;
  end: number;
}

export interface SalvageResult {
  calls: SalvagedCall[];
  problems: SalvageProblem[];
  /** The text without the well-formed calls (seams joined by one blank line). */
  displayText: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,})(.*)$/;
const TOOL_INFO = /^tool:([^\s]*)(.*)$/;
const TOOL_NAME = /^[A-Za-z_][\w.-]*$/;
const HEADER_PAIR = /\s*([A-Za-z_][\w.-]*)=("(?:[^"\\\n]|\\.)*"|\S+)/y;
const NAME_KEYS = ['name', 'tool'];
const ARG_KEYS = ['arguments', 'args', 'input', 'parameters'];
const EXTRA_KEYS = ['type', 'id'];
const ENVELOPE_TYPES = ['tool_call', 'function', 'tool_use'];
/** Characters of a block shown to the model as its label. */
const LABEL_CHARS = 40;

interface Line { start: number; end: number; next: number; text: string }

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let at = 0;
  while (at < text.length) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    const next = nl < 0 ? text.length : nl + 1;
    lines.push({ start: at, end, next, text: text.slice(at, end).replace(/\r$/, '') });
    at = next;
  }
  return lines;
}

/** Escapes raw control characters inside JSON strings, then parses; throws SyntaxError as JSON.parse does. */
export function parseLenientJson(body: string): unknown {
  let out = '';
  let inString = false;
  let escaped = false;
  for (const ch of body) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      else if (ch === '\n') { out += '\\n'; continue; }
      else if (ch === '\r') { out += '\\r'; continue; }
      else if (ch === '\t') { out += '\\t'; continue; }
    } else if (ch === '"') inString = true;
    out += ch;
  }
  return JSON.parse(out);
}

/** Index of the line that closes a fence of `ticks` backticks opened before line `from`, outside JSON strings (-1: none). */
function findClose(lines: Line[], from: number, ticks: number, jsonAware: boolean): number {
  const closes = (l: Line) => /^ {0,3}`+\s*$/.test(l.text) && l.text.trim().length >= ticks;
  let inString = false;
  let escaped = false;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!;
    if (!inString && closes(line)) return i;
    if (!jsonAware) continue;
    for (const ch of line.text) {
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
    }
  }
  return -1;
}

/** A tool block's body: empty is `{}`; `balanced` false means a string in it never closes. */
function parseBody(body: string, balanced: boolean): { value: unknown } | { error: string } {
  if (body.trim() === '') return { value: {} };
  if (!balanced) return { error: 'a string is not closed' };
  try {
    return { value: parseLenientJson(body) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function headerValue(raw: string): unknown {
  if (raw.startsWith('"')) return JSON.parse(raw) as string;
  if (/^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(raw)) return JSON.parse(raw) as unknown;
  return raw;
}

function parseHeader(rest: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  HEADER_PAIR.lastIndex = 0;
  let at = 0;
  while (at < rest.length) {
    if (rest.slice(at).trim() === '') break;
    HEADER_PAIR.lastIndex = at;
    const m = HEADER_PAIR.exec(rest);
    if (!m) return null;
    try {
      out[m[1]!] = headerValue(m[2]!);
    } catch {
      return null;
    }
    at = HEADER_PAIR.lastIndex;
  }
  return out;
}

/** A value that is an envelope: its tool name and arguments (null: this JSON is not a tool call). */
function envelope(v: unknown): { name: string; args: unknown } | null {
  if (!isPlainObject(v)) return null;
  const keys = Object.keys(v);
  const nameKeys = keys.filter((k) => NAME_KEYS.includes(k));
  const argKeys = keys.filter((k) => ARG_KEYS.includes(k));
  if (nameKeys.length !== 1 || argKeys.length !== 1) return null;
  if (keys.some((k) => !NAME_KEYS.includes(k) && !ARG_KEYS.includes(k) && !EXTRA_KEYS.includes(k))) return null;
  if ('type' in v && !ENVELOPE_TYPES.includes(v.type as string)) return null;
  const name = v[nameKeys[0]!];
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) return null;
  let args = v[argKeys[0]!];
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args) as unknown;
    } catch {
      return null;
    }
  }
  return isPlainObject(args) ? { name, args } : null;
}

/** The end (exclusive) of a JSON object starting at `from`, string-aware; -1 when it never closes. */
function objectEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

function label(s: string): string {
  return quoteLine(s, LABEL_CHARS);
}

/** Finds the tool calls written as text in `text` (see the module comment for the shapes). */
export function salvageToolCalls(text: string, toolNames: readonly string[]): SalvageResult {
  const calls: SalvagedCall[] = [];
  const problems: SalvageProblem[] = [];
  const known = new Set(toolNames);
  const active = toolNames.length > 0 ? toolNames.join(', ') : '(none)';
  const lines = splitLines(text);
  const problem = (code: SalvageProblemCode, lbl: string, message: string, start: number, end: number, source: 'fence' | 'json' = 'fence') =>
    problems.push({ code, source, label: label(lbl), message, start, end });
  const accept = (name: string, args: Record<string, unknown>, source: 'fence' | 'json', lbl: string, start: number, end: number) => {
    if (!known.has(name)) return problem('unknownTool', lbl, `There is no tool named "${name}". The active tools are: ${active}.`, start, end, source);
    if (calls.length >= MAX_SALVAGED_CALLS) return problem('tooMany', lbl, `Not run: at most ${MAX_SALVAGED_CALLS} tool calls are taken from one reply. Send the rest in your next reply.`, start, end, source);
    calls.push({ name, argumentsJson: JSON.stringify(args), source, start, end });
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = FENCE_OPEN.exec(line.text);
    if (open) {
      const ticks = open[1]!.length;
      const info = open[2]!.trim();
      const tool = TOOL_INFO.exec(info);
      let close = findClose(lines, i + 1, ticks, tool !== null);
      const jsonClose = close;
      if (close < 0 && tool) close = findClose(lines, i + 1, ticks, false); // an unbalanced quote: the plain fence rule, then bad JSON
      const end = close < 0 ? text.length : lines[close]!.next;
      const body = text.slice(line.next, close < 0 ? text.length : lines[close]!.start);
      if (tool) {
        const lbl = line.text.trim();
        const name = tool[1]!;
        if (close < 0) problem('unclosed', lbl, `The tool block is not closed: end it with a line of ${'`'.repeat(ticks)}.`, line.start, end);
        else if (name === '') problem('noName', lbl, `The tool block names no tool: write \`\`\`tool:<name>. The active tools are: ${active}.`, line.start, end);
        else {
          const header = parseHeader(tool[2]!);
          const parsed = parseBody(body, jsonClose >= 0);
          if (!header) problem('badHeader', lbl, 'The fence line after the tool name must be key=value pairs (quote values with spaces: key="a b").', line.start, end);
          else if ('error' in parsed) problem('badJson', lbl, `The block's body is not valid JSON (${parsed.error}). Write one JSON object with the arguments.`, line.start, end);
          else if (!isPlainObject(parsed.value)) problem('notAnObject', lbl, 'The block\'s body must be one JSON object with the arguments, e.g. {"path": "a.txt"}.', line.start, end);
          else {
            const args = parsed.value;
            const clash = Object.keys(header).find((k) => k in args && JSON.stringify(args[k]) !== JSON.stringify(header[k]));
            if (clash) problem('conflict', lbl, `"${clash}" is given both on the fence line and in the body, with different values. Give it once.`, line.start, end);
            else accept(name, { ...header, ...args }, 'fence', lbl, line.start, end);
          }
        }
      } else if (close >= 0 && (info === '' || info.toLowerCase() === 'json')) {
        // A plain or json fence whose whole body is one envelope is a call; any other body stays text.
        try {
          const env = envelope(parseLenientJson(body));
          if (env) accept(env.name, env.args as Record<string, unknown>, 'json', body, line.start, end);
        } catch {
          /* not JSON: just a code block */
        }
      }
      i = close < 0 ? lines.length : close; // nothing inside a fence is scanned again
      continue;
    }
    // A bare envelope: `{` opening a line, its object closing at the end of a line.
    if (!/^\s*\{/.test(line.text)) continue;
    const from = line.start + line.text.indexOf('{');
    const stop = objectEnd(text, from);
    if (stop < 0) continue;
    const endLine = lines.findIndex((l) => l.start <= stop && stop <= l.end);
    const tail = endLine < 0 ? '' : text.slice(stop, lines[endLine]!.end);
    if (endLine < 0 || tail.trim() !== '') continue;
    let value: unknown;
    try {
      value = parseLenientJson(text.slice(from, stop));
    } catch {
      continue;
    }
    const env = envelope(value);
    if (!env) continue;
    accept(env.name, env.args as Record<string, unknown>, 'json', text.slice(from, stop), line.start, lines[endLine]!.next);
    i = endLine;
  }
  return { calls, problems, displayText: withoutRanges(text, calls) };
}

/** The text with the calls' ranges cut out; each seam becomes one blank line (none at the ends). */
function withoutRanges(text: string, calls: readonly SalvagedCall[]): string {
  if (calls.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const c of [...calls].sort((a, b) => a.start - b.start)) {
    parts.push(text.slice(at, c.start));
    at = c.end;
  }
  parts.push(text.slice(at));
  return parts
    .map((p) => p.replace(/^\s*\n/, '').replace(/\s+$/, ''))
    .filter((p) => p.length > 0)
    .join('\n\n');
}
