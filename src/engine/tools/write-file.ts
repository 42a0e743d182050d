/**
 * `write_file`: creates or overwrites a workspace file. Owns the atomic write used by every write
 * tool: the data goes to a temporary file in the same directory which is then renamed over the
 * target, so readers (editors, watchers, the checkpoint code) never see a half-written file.
 * Symlinks inside the workspace are written through (the real file changes, the link survives).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ToolDefinition } from './schema';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

/** Random bytes in a temporary file's name; enough that concurrent writers never collide. */
const TEMP_NAME_RANDOM_BYTES = 6;

export interface WriteFileArgs {
  path: string;
  content: string;
}

/**
 * Writes `data` to `file` atomically (temp file + rename in the same directory), creating parent
 * directories. An existing file keeps its permission bits. Returns whether the file existed.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<{ existed: boolean }> {
  const dir = path.dirname(file);
  let mode: number | undefined;
  try {
    const st = await fs.stat(file);
    if (st.isDirectory()) throw new ToolError('io', `Cannot write ${path.basename(file)}: it is a directory.`);
    mode = st.mode & 0o7777;
  } catch (e) {
    if (e instanceof ToolError) throw e;
  }
  try {
    await fs.mkdir(dir, { recursive: true });
  } catch (e) {
    throw new ToolError('io', `Cannot create directory for ${path.basename(file)}: ${(e as Error).message}`);
  }
  const temp = path.join(dir, `.${path.basename(file)}.vox-${process.pid}-${randomBytes(TEMP_NAME_RANDOM_BYTES).toString('hex')}.tmp`);
  try {
    const fh = await fs.open(temp, 'wx', mode ?? 0o666);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (mode !== undefined) await fs.chmod(temp, mode); // open() applies the umask; restore exact bits
    await fs.rename(temp, file);
  } catch (e) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw new ToolError('io', `Cannot write ${path.basename(file)}: ${(e as Error).message}`);
  }
  return { existed: mode !== undefined };
}

async function writeFile(args: WriteFileArgs, ctx: ToolContext): Promise<ToolResult> {
  const resolved = await resolveInWorkspace(ctx.workspaceRoot, args.path, { forWrite: true });
  if (resolved.realRelative === '.') throw new ToolError('invalidArguments', 'write_file needs a file path, not the workspace root.');
  const { existed } = await writeFileAtomic(resolved.real, args.content);
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return {
    content: `${existed ? 'Overwrote' : 'Created'} ${resolved.realRelative} (${bytes} bytes).`,
    changedPaths: [resolved.realRelative],
  };
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
