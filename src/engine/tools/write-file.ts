/**
 * `write_file`: creates or overwrites a workspace file. The write itself is `writeInWorkspace`
 * (./confined-fs.ts): atomic (a temporary file in the target's directory renamed over it, so
 * readers never see a half-written file), race-free (the directory is held open, nothing is ever
 * created outside the workspace) and never over a directory, FIFO, socket or device. Symlinks
 * inside the workspace are written through (the real file changes, the link survives).
 */
import type { ToolDefinition } from './schema';
import { writeInWorkspace } from './confined-fs';
import { ToolError, type ToolContext, type ToolResult } from './types';

export interface WriteFileArgs {
  path: string;
  content: string;
}

async function writeFile(args: WriteFileArgs, ctx: ToolContext): Promise<ToolResult> {
  try {
    const { resolved, existed } = await writeInWorkspace(ctx.workspaceRoot, args.path, args.content);
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return {
      content: `${existed ? 'Overwrote' : 'Created'} ${resolved.realRelative} (${bytes} bytes).`,
      changedPaths: [resolved.realRelative],
    };
  } catch (e) {
    if (e instanceof ToolError && e.code === 'invalidArguments') {
      throw new ToolError('invalidArguments', 'write_file needs a file path, not the workspace root.');
    }
    throw e;
  }
}

export const writeFileTool: ToolDefinition<WriteFileArgs> = {
  spec: {
    name: 'write_file',
    description:
      'Create a file or replace its entire content (parent directories are created). Prefer apply_edit for ' +
      'changing part of an existing file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.', minLength: 1 },
        content: { type: 'string', description: 'The complete new file content.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  toolClass: 'write',
  mutating: true,
  run: writeFile,
};
