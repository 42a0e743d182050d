/**
 * The conversation tree (branches): messages (message.added, message.edited) kept in the tree of
 * every branch, the head moved by a checkpoint restore (thread.rewound) or a branch switch
 * (thread.branchSwitched) — ../tree-state.ts derives the open branch from it — and the tree's
 * intents under `tree`: regenerate, retry, edit, switch branch, compare (../tree-intents.ts).
 */
import { addMessage, editMessage, moveHead } from '../tree-state';
import { TreeIntents } from '../tree-intents';
import { defineFeature } from './feature';

export const branchesFeature = defineFeature({
  name: 'branches',
  events: {
    'message.added'(state, ev, result) {
      const run = ev.runId !== null ? state.runs[ev.runId] : undefined;
      if (run && ev.role === 'assistant') run.final = { messageId: ev.messageId, content: ev.content, status: ev.status };
      addMessage(state, ev, ev.time);
      if (ev.role === 'user') result.userMessages.push(ev.messageId);
    },
    'message.edited'(state, ev) {
      editMessage(state, ev.messageId, ev.content, ev.time);
    },
    'thread.rewound'(state, ev) {
      // The head goes back (an unknown target is ignored: show everything rather than guess); the later messages stay a branch.
      moveHead(state, ev.toMessageId);
    },
    'thread.branchSwitched'(state, ev) {
      moveHead(state, ev.toMessageId); // the user picked a branch: its tip is the head
    },
  },
  install(ctx) {
    /** Regenerate, retry, edit, switch branch, compare (../tree-intents.ts). */
    const tree = new TreeIntents({ model: ctx.model, send: (c) => ctx.send(c), hostAction: (a, args) => ctx.hostAction(a, args) });
    return { intents: { tree } };
  },
});
