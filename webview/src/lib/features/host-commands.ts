/**
 * What the extension asks of the chat view (`hostCommand` updates: the palette's New Thread,
 * Focus Composer, Add to Chat, a search result to open at its message, the approval keybindings), done through the
 * controller's own intents.
 */
import { approvalsFeature } from './approvals';
import { defineFeature } from './feature';
import { searchFeature } from './search';

export const hostCommandsFeature = defineFeature({
  name: 'hostCommands',
  install(ctx) {
    const m = ctx.model;
    return {
      updates: {
        hostCommand(u) {
          switch (u.command) {
            case 'newThread':
              ctx.newThread();
              return;
            case 'focusComposer':
              m.focusRequests++;
              return;
            case 'insertPrompt':
              if (u.text) m.draft = m.draft.length > 0 ? `${m.draft}\n${u.text}` : u.text;
              m.focusRequests++;
              return;
            case 'approveWaiting':
              ctx.use(approvalsFeature).respondToShownApproval('approved');
              return;
            case 'denyWaiting':
              ctx.use(approvalsFeature).respondToShownApproval('denied');
              return;
            case 'nextWaiting':
              ctx.use(approvalsFeature).showNextApproval();
              return;
            case 'openThread':
              if (u.threadId && u.messageId) ctx.use(searchFeature).requestReveal(u.threadId, u.messageId);
              if (u.threadId) ctx.openThread(u.threadId);
              return;
          }
        },
      },
    };
  },
});
