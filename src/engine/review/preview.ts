/**
 * The preview of a write_file / apply_edit call waiting for approval: the file's bytes now and
 * exactly what the tool will write, computed by the tools' own code without writing anything
 * (`planApplyEdit` is apply_edit's first half; write_file writes its `content` verbatim), so the
 * diff the user approves is the change that happens — as long as the file does not change in
 * between (the tool then works on the newer file, as it would without a preview).
 */
import { planApplyEdit, type ApplyEditArgs } from '../tools/apply-edit';
import { openInWorkspace, specialFileMessage } from '../tools/confined-fs';
import type { ToolRegistry } from '../tools/registry';
import { ToolError } from '../tools/types';
import type { WriteFileArgs } from '../tools/write-file';
import { ReviewError } from './errors';

/** Tools whose calls can be previewed as a file diff. */
export const PREVIEWABLE_TOOLS: ReadonlySet<string> = new Set(['write_file', 'apply_edit']);
/** Largest current file a preview reads (apply_edit refuses bigger ones itself). */
export const PREVIEW_MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface EditPreview {
  /** Workspace-relative path the call writes. */
  path: string;
  /** The file's bytes now; null when it does not exist yet. */
  before: Buffer | null;
  /** What the tool will write. */
  after: Buffer;
}

async function currentBytes(root: string, userPath: string): Promise<{ rel: string; bytes: Buffer | null }> {
  const { resolved, entry } = await openInWorkspace(root, userPath);
  const rel = resolved.realRelative;
  if (entry.kind === 'missing') return { rel, bytes: null };
  if (entry.kind === 'directory') {
    await entry.dir.close();
    throw new ReviewError('notAFile', `${rel} is a directory; write_file cannot replace it.`);
  }
  if (entry.kind === 'special') throw new ReviewError('notAFile', specialFileMessage(rel, entry.stat));
  try {
    if (entry.stat.size > PREVIEW_MAX_FILE_BYTES) throw new ReviewError('tooLarge', `${rel} is ${entry.stat.size} bytes; previews read at most ${PREVIEW_MAX_FILE_BYTES}.`);
    return { rel, bytes: await entry.handle.readFile() };
  } finally {
    await entry.handle.close();
  }
}

/** The preview of one call (`toolName` with its raw JSON arguments) in `workspaceRoot`. */
export async function previewEdit(tools: ToolRegistry, workspaceRoot: string, toolName: string, argumentsJson: string): Promise<EditPreview> {
  if (!PREVIEWABLE_TOOLS.has(toolName)) throw new ReviewError('notAnEdit', `${toolName} does not edit a file; only write_file and apply_edit calls have a preview.`);
  try {
    const tool = tools.lookup(toolName);
    if (toolName === 'write_file') {
      const args = tool.parseArgs(argumentsJson) as WriteFileArgs;
      const { rel, bytes } = await currentBytes(workspaceRoot, args.path);
      return { path: rel, before: bytes, after: Buffer.from(args.content, 'utf8') };
    }
    const args = tool.parseArgs(argumentsJson) as ApplyEditArgs;
    const plan = await planApplyEdit(args, { workspaceRoot });
    if ('content' in plan) throw new ReviewError('cannotPreview', plan.content);
    return { path: plan.rel, before: plan.before, after: Buffer.from(plan.after, 'utf8') };
  } catch (e) {
    // The tool would fail the same way when it runs: say why there is nothing to preview.
    if (e instanceof ToolError) throw new ReviewError('cannotPreview', `No preview: ${e.message}`, { cause: e });
    throw e;
  }
}
