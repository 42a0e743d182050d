/** Handlers of the fork command (../../../protocol/commands/forks.ts): a thread's path copied into a new thread. */
import { forkThread } from '../../forks/fork';
import type { HandlerTable } from './types';

export const forkHandlers: HandlerTable<'forkThread'> = {
  forkThread({ services: { store } }, cmd) {
    return forkThread(store, cmd.threadId, cmd.messageId);
  },
};
