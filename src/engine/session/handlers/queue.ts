/** Handlers of the queue commands (../../../protocol/commands/queue.ts). */
import type { QueuedPromptView } from '../../../protocol/commands/queue';
import type { QueueRow } from '../../store/store';
import type { HandlerTable } from './types';

type QueueCommand = 'listQueue' | 'getQueued' | 'editQueued' | 'moveQueued' | 'cancelQueued' | 'steerQueued';

const view = (r: QueueRow): QueuedPromptView => ({
  entryId: r.entryId, threadId: r.threadId, prompt: r.prompt, model: r.model, position: r.position < 0 ? null : r.position, steer: r.steer,
  status: r.status, runId: r.runId, ownerPid: r.ownerPid, createdAt: r.createdAt,
});

export const queueHandlers: HandlerTable<QueueCommand> = {
  listQueue({ services: { queue } }, cmd) {
    return { entries: queue.list(cmd.threadId).map(view) };
  },
  getQueued({ services: { queue } }, cmd) {
    return { entry: view(queue.entry(cmd.entryId)) };
  },
  editQueued({ services: { queue } }, cmd) {
    queue.edit(cmd.threadId, cmd.entryId, cmd.prompt);
    return {};
  },
  moveQueued({ services: { queue } }, cmd) {
    queue.move(cmd.threadId, cmd.entryId, cmd.toIndex);
    return {};
  },
  cancelQueued({ services: { queue } }, cmd) {
    queue.cancel(cmd.threadId, cmd.entryId);
    return {};
  },
  steerQueued({ services: { queue } }, cmd) {
    return queue.steer(cmd.threadId, cmd.entryId);
  },
};
