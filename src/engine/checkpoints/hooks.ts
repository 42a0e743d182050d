/**
 * Checkpoints as handlers of the agent loop's stages (../agent/hooks.ts), for runs whose tools act
 * in the service's workspace (a variant's worktree is not checkpointed into the main one):
 *   turnStart   prepare the warm state in the background (non-blocking)
 *   beforeTool  capture before every file-changing tool (blocking). A failed capture stops the
 *               tool it guards: the call waits for the user with the reason ("the checkpoint
 *               failed: the disk is full"); approved, the tool runs without its checkpoint;
 *               denied, the turn stops and the run fails with the capture's typed error.
 *   afterTool   collect the paths the tool reports changing (so the next capture looks at them only)
 *   turnEnd     capture at the end of every turn, whatever its status (blocking, reported)
 */
import type { HookBus, HookInputs } from '../agent/hooks';
import type { ApprovalGate } from '../approvals/approval';
import { diskFullOf } from '../platform/disk-full';
import { VoxError } from '../../protocol/wire/vox-error';
import { CheckpointError } from './types';
import type { CheckpointService } from './service';

/** What the user is asked after a failed capture: the reason the call waits. */
export function checkpointFailedReason(failure: Error): string {
  return `the checkpoint failed: ${diskFullOf(failure)?.message ?? failure.message}`;
}

/** Asks whether the tool may run without its checkpoint; throws the typed failure (stopping the turn) when not. */
async function askToGoOn(gate: ApprovalGate, c: HookInputs['beforeTool'], failure: Error): Promise<void> {
  const decision = await gate.request(
    { callId: c.itemId, threadId: c.threadId, runId: c.runId, toolName: c.call.name, argumentsJson: c.call.argumentsJson, toolClass: c.tool.toolClass, safeguard: checkpointFailedReason(failure) },
    c.turn.signal,
  );
  if (decision === 'approved') return;
  throw diskFullOf(failure) ?? (failure instanceof VoxError ? failure : new CheckpointError('gitFailed', `the checkpoint before ${c.call.name} failed: ${failure.message}`));
}

export function installCheckpointHooks(bus: HookBus, service: CheckpointService, gate: ApprovalGate): () => void {
  const ours = (root: string) => root === service.workspaceRoot;
  const off = [
    bus.on('turnStart', (c) => void (ours(c.workspaceRoot) && service.prepare()), { name: 'checkpoints: warm-up', blocking: false }),
    bus.on(
      'beforeTool',
      async (c) => {
        if (!ours(c.workspaceRoot) || !c.tool.mutating) return;
        const failure = await service.beforeMutatingTool({ threadId: c.threadId, runId: c.runId, call: c.call });
        if (failure) await askToGoOn(gate, c, failure);
      },
      { name: 'checkpoints: before a file-changing tool', failure: 'stopsTurn' },
    ),
    bus.on(
      'afterTool',
      (c) => {
        if (ours(c.workspaceRoot) && c.tool.mutating) service.afterMutatingTool(c.result?.changedPaths ? { changedPaths: c.result.changedPaths } : {});
      },
      { name: 'checkpoints: paths the tool changed' },
    ),
    bus.on('turnEnd', async (c) => void (ours(c.workspaceRoot) && (await service.onTurnEnd({ threadId: c.threadId, runId: c.runId }))), { name: 'checkpoints: turn end' }),
  ];
  return () => off.forEach((f) => f());
}
