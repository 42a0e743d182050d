/**
 * The local provider's tool-calling protocol. Local models answer with exactly one JSON object,
 * `{"type":"message","text":…}` or `{"type":"tool_call","name":…,"arguments":{…}}`, enforced by
 * a JSON-schema grammar. This file owns: the grammar schema (tool parameter schemas reduced to
 * what node-llama-cpp's grammar supports), the system prompt that explains the protocol, the
 * mapping of Vox chat history onto node-llama-cpp history, live decoding of a streaming
 * `message` text, and parsing/validating the final object.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { ChatMessage, JsonSchema, ToolCall, ToolSpec } from './types';

/** A schema in the subset node-llama-cpp's JSON grammar understands. */
export type GrammarSchema = Record<string, unknown>;

/** Nesting depth beyond which tool parameter schemas collapse to "any scalar". */
const MAX_SCHEMA_DEPTH = 8;
const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean', 'null'] as const;
const ANY_SCALAR: GrammarSchema = { type: [...SCALAR_TYPES] };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/**
 * Reduces a JSON Schema to node-llama-cpp's grammar subset. Only `required` properties are kept
 * when a schema lists them, because the grammar makes every listed property mandatory and a
 * model forced to invent optional values (say `limit: 0`) does more harm than omitting them.
 * `maxLength`, when given, caps every string's length and every array's size; models that cannot
 * close a string on their own (the demo bigram) declare it in their GGUF metadata.
 */
export function toGrammarSchema(schema: unknown, maxLength?: number, depth = 0): GrammarSchema {
  if (!isRecord(schema) || depth > MAX_SCHEMA_DEPTH) return ANY_SCALAR;
  if ('const' in schema && isPrimitive(schema.const)) return { const: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isPrimitive)) return { enum: schema.enum };
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives && alternatives.length > 0) {
    return { oneOf: alternatives.map((s) => toGrammarSchema(s, maxLength, depth + 1)) };
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length > 1) return { oneOf: types.map((type) => toGrammarSchema({ ...schema, type }, maxLength, depth + 1)) };
  const type = types[0];
  const cap = (n: unknown): number | undefined =>
    typeof n === 'number' ? (maxLength === undefined ? n : Math.min(n, maxLength)) : maxLength;
  switch (type) {
    case 'string': {
      const out: GrammarSchema = { type: 'string' };
      const max = cap(schema.maxLength);
      if (max !== undefined) out.maxLength = max;
      if (typeof schema.minLength === 'number' && (max === undefined || schema.minLength <= max)) out.minLength = schema.minLength;
      return out;
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type };
    case 'array': {
      const out: GrammarSchema = { type: 'array', items: toGrammarSchema(schema.items, maxLength, depth + 1) };
      const max = cap(schema.maxItems);
      if (max !== undefined) out.maxItems = max;
      if (typeof schema.minItems === 'number' && (max === undefined || schema.minItems <= max)) out.minItems = schema.minItems;
      return out;
    }
    case 'object':
      return objectSchema(schema, maxLength, depth);
    default:
      return isRecord(schema.properties) ? objectSchema(schema, maxLength, depth) : ANY_SCALAR;
  }
}

function objectSchema(schema: Record<string, unknown>, maxLength: number | undefined, depth: number): GrammarSchema {
  const props = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : undefined;
  const keys = Object.keys(props).filter((k) => !required || required.includes(k));
  if (keys.length === 0) {
    // A free-form object: allow any keys unless the model needs everything bounded.
    return maxLength === undefined ? { type: 'object', additionalProperties: true } : { type: 'object', properties: {} };
  }
  return {
    type: 'object',
    properties: Object.fromEntries(keys.map((k) => [k, toGrammarSchema(props[k], maxLength, depth + 1)])),
  };
}

/** The grammar schema of one local-model reply when tools are available. */
export function toolResponseSchema(tools: ToolSpec[], maxLength?: number): GrammarSchema {
  const text: GrammarSchema = maxLength === undefined ? { type: 'string' } : { type: 'string', maxLength };
  return {
    oneOf: [
      { type: 'object', properties: { type: { const: 'message' }, text } },
      ...tools.map((t) => ({
        type: 'object',
        properties: {
          type: { const: 'tool_call' },
          name: { const: t.name },
          arguments: toGrammarSchema({ ...t.parameters, type: 'object' }, maxLength),
        },
      })),
    ],
  };
}

/** System-prompt section that teaches the model the reply protocol and lists the tools. */
export function toolSystemPrompt(tools: ToolSpec[]): string {
  const lines = [
    'You can use tools. Reply with exactly one JSON object and nothing else:',
    '- to answer the user: {"type":"message","text":"<your answer>"}',
    '- to call one tool: {"type":"tool_call","name":"<tool name>","arguments":{<arguments>}}',
    'After a tool call you receive its result and may call another tool or answer.',
    'Tools:',
    ...tools.map((t) => `- ${t.name}: ${t.description}\n  parameters (JSON Schema): ${JSON.stringify(t.parameters)}`),
  ];
  return lines.join('\n');
}

const toolCallJson = (c: ToolCall): string => {
  let args: unknown;
  try {
    args = JSON.parse(c.argumentsJson);
  } catch {
    args = c.argumentsJson;
  }
  return JSON.stringify({ type: 'tool_call', name: c.name, arguments: args });
};

/**
 * Maps Vox messages onto node-llama-cpp history, ending with an empty model turn to complete.
 * With tools, assistant turns are shown in the JSON protocol the model must keep using; tool
 * results become user turns that name the call they answer.
 */
export function toChatHistory(messages: ChatMessage[], tools: ToolSpec[] | undefined): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const toolMode = !!tools && tools.length > 0;
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        history.push({ type: 'system', text: m.content });
        break;
      case 'user':
        history.push({ type: 'user', text: m.content });
        break;
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        let text: string;
        if (toolMode) {
          const parts = calls.map(toolCallJson);
          if (m.content || parts.length === 0) parts.unshift(JSON.stringify({ type: 'message', text: m.content }));
          text = parts.join('\n');
        } else {
          text = [m.content, ...calls.map((c) => `[called tool ${c.name} with ${c.argumentsJson}]`)].filter(Boolean).join('\n');
        }
        history.push({ type: 'model', response: [text] });
        break;
      }
      case 'tool':
        history.push({
          type: 'user',
          text: `Result of tool call ${m.name} (${m.toolCallId})${m.isError ? ' [error]' : ''}:\n${m.content}`,
        });
        break;
    }
  }
  if (toolMode) {
    const prompt = toolSystemPrompt(tools);
    const first = history[0];
    if (first?.type === 'system' && typeof first.text === 'string') first.text = `${first.text}\n\n${prompt}`;
    else history.unshift({ type: 'system', text: prompt });
  }
  history.push({ type: 'model', response: [] });
  return history;
}

const MESSAGE_PREFIX = /^\s*\{\s*"type"\s*:\s*"message"\s*,\s*"text"\s*:\s*"/;

/** Decodes the `text` of a `{"type":"message",…}` reply while it is still being generated. */
export class MessageTextStreamer {
  private raw = '';
  private pos = -1; // index in `raw` of the next undecoded string character; -1 = prefix not seen
  private closed = false;
  /** Decoded text emitted so far. */
  text = '';

  /** Feeds newly generated raw text; returns the newly decoded part of the message text. */
  push(chunk: string): string {
    this.raw += chunk;
    if (this.closed) return '';
    if (this.pos < 0) {
      const m = MESSAGE_PREFIX.exec(this.raw);
      if (!m) return '';
      this.pos = m[0].length;
    }
    let out = '';
    while (this.pos < this.raw.length) {
      const c = this.raw[this.pos]!;
      if (c === '"') {
        this.closed = true;
        break;
      }
      if (c !== '\\') {
        out += c;
        this.pos++;
        continue;
      }
      const escape = this.completeEscape(this.pos);
      if (escape === undefined) break; // wait for the rest of the escape sequence
      out += JSON.parse(`"${escape}"`) as string;
      this.pos += escape.length;
    }
    this.text += out;
    return out;
  }

  /** The escape sequence starting at `at` if fully present (a surrogate pair counts as one). */
  private completeEscape(at: number): string | undefined {
    const s = this.raw;
    if (at + 1 >= s.length) return undefined;
    if (s[at + 1] !== 'u') return s.slice(at, at + 2);
    if (at + 6 > s.length) return undefined;
    const unit = parseInt(s.slice(at + 2, at + 6), 16);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      // A high surrogate: emit it together with its low half so no delta holds half a character.
      const next = s.slice(at + 6, at + 8);
      if (next === '' || next === '\\') return undefined;
      if (next === '\\u') return at + 12 <= s.length ? s.slice(at, at + 12) : undefined;
    }
    return s.slice(at, at + 6);
  }
}

export type ToolReply = { kind: 'message'; text: string } | { kind: 'toolCall'; name: string; argumentsJson: string };

/** Parses and checks a complete protocol reply. Throws an Error describing what is wrong. */
export function parseToolReply(raw: string, tools: ToolSpec[]): ToolReply {
  const value: unknown = JSON.parse(raw);
  if (!isRecord(value)) throw new Error('reply is not a JSON object');
  if (value.type === 'message') {
    if (typeof value.text !== 'string') throw new Error('message reply without a text string');
    return { kind: 'message', text: value.text };
  }
  if (value.type !== 'tool_call') throw new Error(`unknown reply type ${JSON.stringify(value.type)}`);
  const tool = tools.find((t) => t.name === value.name);
  if (!tool) throw new Error(`call to unknown tool ${JSON.stringify(value.name)}`);
  if (!isRecord(value.arguments)) throw new Error(`arguments of ${tool.name} are not an object`);
  const missing = requiredKeys(tool.parameters).filter((k) => !(k in (value.arguments as Record<string, unknown>)));
  if (missing.length > 0) throw new Error(`call to ${tool.name} lacks required arguments: ${missing.join(', ')}`);
  return { kind: 'toolCall', name: tool.name, argumentsJson: JSON.stringify(value.arguments) };
}

function requiredKeys(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
}
