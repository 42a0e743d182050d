/**
 * The tools of background work (SPEC 2.4), over the run's BackgroundPort (./types.ts):
 * `spawn_subagent` starts a child thread with its own agent loop on a task; `command_status`
 * shows a background job (a command started with `run_command` `background: true`, or a
 * subagent) and `command_kill` stops one. `awaited` (default true) makes the turn wait for the
 * job before it ends and hand its result back; otherwise it keeps running after the turn and its
 * result comes with the next one.
 */
import type { ToolDefinition } from './schema';
import { ToolError, type BackgroundPort, type BackgroundStatusView, type ToolContext } from './types';

/** Longest subagent task. */
export const SUBAGENT_TASK_MAX_CHARS = 20_000;

function portOf(ctx: ToolContext, tool: string): BackgroundPort {
  if (!ctx.background) throw new ToolError('notAvailable', `${tool} is not available in this context`);
  return ctx.background;
}

function describe(v: BackgroundStatusView): string {
  const head = `${v.handle} (${v.kind}${v.threadId ? `, thread ${v.threadId}` : ''}${v.awaited ? ', awaited' : ''}): ${v.title}\nStatus: ${v.status}`;
  return `${head}\n${v.output || '(no output yet)'}`;
}

export const spawnSubagentTool: ToolDefinition<{ task: string; title?: string; awaited?: boolean }> = {
  spec: {
    name: 'spawn_subagent',
    description:
      'Start a subagent: a separate agent with the same tools, working on one self-contained task in its own thread while you go on. ' +
      'Returns a handle at once. With awaited (default true) its final answer is given to you before this turn ends; with awaited false it keeps running after the turn and reports later. ' +
      'Check on it with command_status, stop it with command_kill. Give it everything it needs in the task; it does not see this conversation.',
    parameters: {
      type: 'object',
      properties: {
        task: { type: 'string', description: 'What the subagent should do, with all the context it needs.', minLength: 1 },
        title: { type: 'string', description: 'A short title for its thread (default: the start of the task).', minLength: 1 },
        awaited: { type: 'boolean', description: 'Wait for it before this turn ends (default true).' },
      },
      required: ['task'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  validate(args) {
    if (args.task.length > SUBAGENT_TASK_MAX_CHARS) throw new ToolError('invalidArguments', `spawn_subagent: the task has ${args.task.length} characters; at most ${SUBAGENT_TASK_MAX_CHARS}`);
  },
  async run(args, ctx) {
    const awaited = args.awaited ?? true;
    const { handle, threadId } = await portOf(ctx, 'spawn_subagent').spawnSubagent({ task: args.task, awaited, ...(args.title ? { title: args.title } : {}) });
    return {
      content: `Started subagent ${handle} in thread ${threadId}. ${awaited ? 'Its result will be given to you before this turn ends.' : 'It keeps running after this turn; its result comes with a later turn.'}`,
    };
  },
};

export const commandStatusTool: ToolDefinition<{ handle: string }> = {
  spec: {
    name: 'command_status',
    description: 'Show a background job (a run_command started with background true, or a subagent): whether it still runs, and its output so far or its result.',
    parameters: {
      type: 'object',
      properties: { handle: { type: 'string', description: 'The handle run_command or spawn_subagent returned.', minLength: 1 } },
      required: ['handle'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  async run(args, ctx) {
    return { content: describe(portOf(ctx, 'command_status').status(args.handle)) };
  },
};

export const commandKillTool: ToolDefinition<{ handle: string }> = {
  spec: {
    name: 'command_kill',
    description: 'Stop a background job (a background command is killed with everything it started; a subagent is cancelled).',
    parameters: {
      type: 'object',
      properties: { handle: { type: 'string', description: 'The handle of the job to stop.', minLength: 1 } },
      required: ['handle'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  async run(args, ctx) {
    return { content: describe(await portOf(ctx, 'command_kill').kill(args.handle)) };
  },
};
