/**
 * Forking a thread into a new thread: the source's path from its first message up to a message
 * (default: its head) is copied — prompts, runs with their turn items, answers — into a new
 * thread titled "Fork of …", with the MCP App states of the copied items (SPEC 5.3). The two
 * threads are independent from then on. (Branches inside one thread are ./branches.ts.)
 */
import { int, object, optional, str } from '../wire/validators';
import { name } from './common';
import { defineCommand } from './define';

export const forkView = object({
  threadId: str,
  title: str,
  /** The messages copied (the path up to the fork point). */
  messages: int,
  /** The runs copied with their items. */
  runs: int,
  /** MCP App states cloned with their items. */
  appStates: int,
});

export const forkCommands = {
  forkThread: defineCommand('forkThread', {
    summary: 'Copies the thread\'s path up to a message (default: its head) into a new thread "Fork of …", MCP App states included; answers the new thread.',
    requires: ['read', 'startThreads'],
    params: { threadId: name, messageId: optional(name) },
    result: forkView,
  }),
};
