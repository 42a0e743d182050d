/**
 * How a tool is defined: the small argument-schema dialect the tools use, a validator for it
 * (`parseToolArgs`, so no JSON-Schema dependency is needed), and turning a definition into the
 * `AgentTool` the agent loop calls. Tool modules import this; it imports no tool.
 */
import type { ToolSpec } from '../providers/types';
import { cutText } from './text';
import { ToolError, type AgentTool, type ToolClass, type ToolContext, type ToolResult } from './types';

/** Characters of unparsable argument text quoted back in an invalidArguments error. */
export const ARGS_PREVIEW_CHARS = 200;
/** Largest argument JSON accepted (write_file content included); beyond this the call is refused. */
export const MAX_TOOL_ARGUMENTS_CHARS = 8 * 1024 * 1024;

/** One parameter of a tool: the subset of JSON Schema our validator understands. */
export type ArgSchema = {
  type: 'string' | 'integer' | 'number' | 'boolean';
  description: string;
  /** Strings only: fewest characters. */
  minLength?: number;
  /** Numbers only: inclusive bounds. */
  minimum?: number;
  maximum?: number;
};

/** A tool's parameters: a flat object; unknown properties are refused. */
export type ObjectSchema = {
  type: 'object';
  properties: Record<string, ArgSchema>;
  required: string[];
  additionalProperties: false;
};

/** What a tool module exports; `createDefaultTools` adds `parseArgs` from the schema. */
export interface ToolDefinition<A> {
  spec: ToolSpec & { parameters: ObjectSchema };
  toolClass: ToolClass;
  mutating: boolean;
  /** Checks beyond the schema (e.g. a range's order); throws `ToolError('invalidArguments')`. */
  validate?(args: A): void;
  run(args: A, ctx: ToolContext): Promise<ToolResult>;
}

function invalid(tool: string, message: string): ToolError {
  return new ToolError('invalidArguments', `${tool}: ${message}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'number' && !Number.isInteger(value) ? 'a fractional number' : `a ${typeof value}`;
}

function checkValue(tool: string, key: string, schema: ArgSchema, value: unknown): void {
  const ok =
    schema.type === 'string' ? typeof value === 'string'
    : schema.type === 'boolean' ? typeof value === 'boolean'
    : schema.type === 'integer' ? typeof value === 'number' && Number.isInteger(value)
    : typeof value === 'number' && Number.isFinite(value);
  if (!ok) throw invalid(tool, `"${key}" must be ${schema.type === 'integer' ? 'an' : 'a'} ${schema.type}, got ${describe(value)}.`);
  if (typeof value === 'string' && schema.minLength !== undefined && value.length < schema.minLength) {
    throw invalid(tool, `"${key}" must not be empty.`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) throw invalid(tool, `"${key}" must be at least ${schema.minimum}, got ${value}.`);
    if (schema.maximum !== undefined && value > schema.maximum) throw invalid(tool, `"${key}" must be at most ${schema.maximum}, got ${value}.`);
  }
}

/**
 * Parses a model's raw argument JSON and validates it against `schema`. Whitespace-only input is
 * read as `{}`; `null` for an optional property counts as absent. Throws
 * `ToolError('invalidArguments')` naming the tool and the problem, with a preview of bad JSON.
 */
export function parseToolArgs<A>(toolName: string, argumentsJson: string, schema: ObjectSchema): A {
  if (argumentsJson.length > MAX_TOOL_ARGUMENTS_CHARS) {
    throw new ToolError('tooLarge', `${toolName}: arguments are ${argumentsJson.length} characters; the limit is ${MAX_TOOL_ARGUMENTS_CHARS}.`);
  }
  let value: unknown;
  if (argumentsJson.trim() === '') {
    value = {};
  } else {
    try {
      value = JSON.parse(argumentsJson);
    } catch (e) {
      const preview = cutText(argumentsJson, ARGS_PREVIEW_CHARS);
      const more = preview.length < argumentsJson.length ? ` … (${argumentsJson.length} characters in all)` : '';
      throw invalid(toolName, `arguments are not valid JSON (${(e as Error).message}). Received: ${preview}${more}`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(toolName, `arguments must be a JSON object, got ${describe(value)}.`);
  }
  const input = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(schema.properties, key)) {
      throw invalid(toolName, `unknown property "${key}"; expected ${Object.keys(schema.properties).join(', ')}.`);
    }
  }
  for (const [key, propSchema] of Object.entries(schema.properties)) {
    const v = input[key];
    const required = schema.required.includes(key);
    if (v === undefined || (v === null && !required)) {
      if (required) throw invalid(toolName, `missing required property "${key}".`);
      continue;
    }
    checkValue(toolName, key, propSchema, v);
    out[key] = v;
  }
  return out as A;
}

/** Turns a tool definition into the `AgentTool` the agent loop uses. */
export function toAgentTool<A>(def: ToolDefinition<A>): AgentTool<A> {
  return {
    spec: def.spec,
    toolClass: def.toolClass,
    mutating: def.mutating,
    parseArgs(argumentsJson: string): A {
      const args = parseToolArgs<A>(def.spec.name, argumentsJson, def.spec.parameters);
      def.validate?.(args);
      return args;
    },
    run: (args, ctx) => def.run(args, ctx),
  };
}
