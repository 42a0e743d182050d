/**
 * Checkpoints as handlers of the agent loop's stages (../agent/hooks.ts), for runs whose tools act
 * in the service's workspace (a variant's worktree is not checkpointed into the main one):
 *   turnStart   prepare the warm state in the background (non-blocking)
 *   beforeTool  capture before every file-changing tool (blocking; a failed capture is reported,
 *               the tool still runs)
 *   afterTool   collect the paths the tool reports changing (so the next capture looks at them only)
 *   turnEnd     capture at the end of every turn, whatever its status (blocking, reported)
 */
import type { HookBus } from '../agent/hooks';
import type { CheckpointService } from './service';

export function installCheckpointHooks(bus: HookBus, service: CheckpointService): () => void {
  const ours = (root: string) => root === service.workspaceRoot;
  const off = [
    bus.on('turnStart', (c) => void (ours(c.workspaceRoot) && service.prepare()), { name: 'checkpoints: warm-up', blocking: false }),
    bus.on(
      'beforeTool',
      async (c) => {
        if (ours(c.workspaceRoot) && c.tool.mutating) await service.beforeMutatingTool({ threadId: c.threadId, runId: c.runId, call: c.call });
      },
      { name: 'checkpoints: before a file-changing tool' },
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
