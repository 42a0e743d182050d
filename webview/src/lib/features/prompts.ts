/**
 * Prompts from the composer: Send (queued behind a running turn, or steering it), Continue after
 * a reply cut at the output-token limit, ArrowUp / ArrowDown recall over the engine's prompt
 * history (`recall`, ../prompt-recall.ts), and the message being sent until it comes back as the
 * thread's user message (or as a queued prompt, or with its rule tokens stripped:
 * ../rules-state.ts). A first prompt in Plan mode creates its thread in Plan first; `/compact`
 * runs instead of being sent (./compaction.ts); a failed send gives the text and its mentions back.
 * Mentions go with `strictMentions`: one that cannot be attached — known from the estimate, or
 * found by the engine at send — stops the send with an error in the composer, never a silent drop.
 */
import { MAX_PROMPT_CHARS } from '../../../../src/protocol/commands/index';
import { splitContext } from '../../../../src/protocol/mentions';
import { PromptRecall, type ArrowInput, type RecallStep } from '../prompt-recall';
import { takeStoredPrompt } from '../rules-state';
import { activeRun } from '../thread-model';
import { compactionFeature } from './compaction';
import { contextFeature } from './context';
import { defineFeature } from './feature';
import { threadsFeature } from './threads';

/** What Continue sends after a reply that stopped at the output-token limit. */
export const CONTINUE_PROMPT = 'Your last reply stopped at the output-token limit. Continue exactly where you stopped, without repeating what you already wrote.';

/** Title of a thread created for a first prompt in Plan mode: the prompt's first line, cut. */
const PLAN_THREAD_TITLE_CHARS = 60;

export const promptsFeature = defineFeature({
  name: 'prompts',
  install(ctx) {
    const m = ctx.model;
    /** ArrowUp/ArrowDown prompt recall (../prompt-recall.ts) over the engine's prompt history. */
    const recall = new PromptRecall();
    const context = () => ctx.use(contextFeature).context;

    /** A new thread for a first prompt in Plan mode: created and switched before the prompt goes (the session answers in order). */
    const createPlanThread = (prompt: string): string => {
      const threadId = `thread:${globalThis.crypto.randomUUID()}`;
      const title = (prompt.trim().split('\n')[0] ?? '').slice(0, PLAN_THREAD_TITLE_CHARS) || 'Plan';
      ctx.send({ type: 'createThread', threadId, title });
      ctx.send({ type: 'setWorkMode', threadId, mode: 'plan' });
      if (m.nextPermissionMode) ctx.send({ type: 'setPermissionMode', scope: 'thread', threadId, mode: m.nextPermissionMode });
      m.nextWorkMode = 'act';
      m.nextPermissionMode = null;
      return threadId;
    };

    const intents = {
      recall,
      /**
       * Sends the draft as a prompt. While the thread runs it is queued for after the turn — or, with
       * `steer`, handed to the running turn at its next step (SPEC 2.4). False when there is nothing
       * to send or a send is still on its way.
       */
      sendPrompt(opts: { steer?: boolean; /** Send although the meter says it does not fit (the user confirmed). */ force?: boolean } = {}): boolean {
        const prompt = m.draft;
        if (prompt.trim().length === 0 || m.sending) return false;
        if (ctx.use(compactionFeature).compaction.slash(prompt)) return true; // `/compact` runs the command instead of being sent
        if (prompt.length > MAX_PROMPT_CHARS) {
          ctx.notify('promptTooLong', `The prompt has ${prompt.length} characters; the limit is ${MAX_PROMPT_CHARS}.`);
          return false;
        }
        if (context().refuseUnattached()) return false; // the composer says which mention, the chip is marked
        if (!opts.force && !context().checkFits()) return false; // the composer asks to confirm
        let threadId = m.thread?.threadId ?? null;
        const running = !!m.thread && !!activeRun(m.thread);
        const mentions = context().mentions();
        if (threadId === null && m.nextWorkMode === 'plan') threadId = createPlanThread(prompt);
        // A new thread's permission mode travels with its first prompt: applied before its first tool call.
        const permissionMode = threadId === null ? m.nextPermissionMode : null;
        if (threadId === null) m.nextPermissionMode = null;
        const requestId = ctx.send({
          type: 'sendPrompt', threadId, prompt, ifBusy: 'queue', ...(opts.steer && running ? { steer: true } : {}), ...(mentions.length > 0 ? { mentions, strictMentions: true } : {}),
          ...(permissionMode ? { newThread: { permissionMode } } : {}),
        }, { prompt });
        m.sending = { requestId, prompt };
        m.draft = '';
        context().clearAfterSend();
        recall.sent(prompt);
        return true;
      },
      /** Continue after a reply that stopped at the output-token limit: a prompt asking the model to go on. */
      continueReply(): boolean {
        const thread = m.thread;
        if (!thread || m.sending) return false;
        const prompt = CONTINUE_PROMPT;
        const requestId = ctx.send({ type: 'sendPrompt', threadId: thread.threadId, prompt, ifBusy: 'queue', history: false }, { prompt });
        m.sending = { requestId, prompt };
        return true;
      },
      /** ArrowUp/ArrowDown in the composer (../prompt-recall.ts): the new draft and caret, or null when the key is the text box's. */
      recallPrompt(direction: 'up' | 'down', input: ArrowInput): RecallStep | null {
        const step = recall.key(direction, input);
        if (step) m.draft = step.draft;
        return step;
      },
      /** Asks the engine for the prompt history (at start and when a new engine session connects). */
      loadPromptHistory(): void {
        recall.requested();
        ctx.send({ type: 'listPromptHistory' });
      },
    };

    return {
      intents,
      results: {
        sendPrompt(started, req, inReplyTo) {
          context().noteSent(started.rules, started.warnings);
          // Rule tokens stripped: the message being sent gives way to the stored one (maybe already here).
          if (started.prompt !== undefined && m.sending?.requestId === inReplyTo) takeStoredPrompt(m, started.prompt);
          ctx.use(threadsFeature).loadThreads();
          if (!m.thread) ctx.openThread(started.threadId);
          else if (m.thread.threadId !== started.threadId) m.sending = null;
          // Queued: it shows in the queue strip (from its event), not as a message being sent.
          if (started.queued && m.sending?.prompt === req.prompt) m.sending = null;
        },
        listPromptHistory(value) {
          recall.setHistory(value.prompts.map((p) => p.prompt));
        },
      },
      errors: {
        sendPrompt(u, req) {
          if (m.sending?.requestId !== u.inReplyTo) return;
          if (m.draft.length === 0 && req.prompt) m.draft = req.prompt; // give the text back
          context().restoreAfterFailedSend(); // and its mentions
          m.sending = null;
          // A mention the engine could not attach: said in the composer, the chip marked (no notice).
          if (u.domain === 'context' && u.code === 'mentionNotAttached') return context().markUnattached(u.message, u.details);
        },
      },
      start: () => intents.loadPromptHistory(),
      reconnected: () => intents.loadPromptHistory(), // a new session may be a new engine (another window's prompts since)
      eventsApplied(thread, res) {
        const sending = m.sending;
        if (!sending || res.userMessages.length === 0) return;
        const contents = thread.entries.flatMap((e) => (e.kind === 'message' && res.userMessages.includes(e.messageId) ? [splitContext(e.content).prompt] : []));
        if (contents.includes(sending.prompt)) m.sending = null;
      },
    };
  },
});
