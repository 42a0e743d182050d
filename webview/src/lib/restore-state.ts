/**
 * The state of the chat's "Restore to here" (types only; the flow is ./features/checkpoints.ts):
 * kept on the app model as `restore` (./app-model.ts).
 */
import type { CommandResult } from '../../../src/protocol/commands/index';

export type RestorePreview = CommandResult<'previewRestore'>;
/** Where the chat's restore is: previewing a turn's checkpoint, restoring, restored (Undo offered), undoing, undone. */
export type RestoreFlow =
  | { phase: 'previewing' | 'preview' | 'restoring'; threadId: string; runId: string; ordinal: number; preview: RestorePreview | null }
  | { phase: 'restored' | 'undoing' | 'undone'; threadId: string; runId: string; ordinal: number; restorePoint: string; changed: number };
