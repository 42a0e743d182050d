/** Handlers of the run commands (../../../protocol/commands/runs.ts). */
import { ChunkBatcher } from '../../stream/chunk-batcher';
import { RunError } from '../../runs/errors';
import { waitView } from '../../runs/rate-limit';
import { isLiveRun } from '../../runs/registry';
import type { TurnChunk, TurnEnd } from '../../stream/turn-stream-registry';
import type { CommandOf } from '../../../protocol/commands/index';
import type { RulesService } from '../../rules/service';
import type { HandlerTable } from './types';
import { checkChoice } from '../../handoff/apply';
import { threadWithGrantModes } from '../thread-modes';

/** The prompt's rules: the paths of its file and folder mentions attach `paths` rules, their labels are known mentions. */
function prepareRules(rules: RulesService, cmd: CommandOf<'sendPrompt'>) {
  const targets = (cmd.mentions ?? []).filter((m) => (m.kind === 'file' || m.kind === 'folder') && m.target).map((m) => m.target!);
  return rules.prepare(cmd.prompt, targets, cmd.threadId, targets);
}

type RunCommand = 'sendPrompt' | 'cancelRun' | 'cancelAllRuns' | 'listRuns' | 'subscribeTurn' | 'resumeRun' | 'snoozeRun' | 'setAutoResume' | 'listWaits';

export const runHandlers: HandlerTable<RunCommand> = {
  async sendPrompt({ services, session }, cmd) {
    const { providers, host, runs, queue, store, context, rules, mcp } = services;
    const model = await providers.resolve(cmd.model ?? host.model());
    // A new thread's modes, or a limited grant's check of an existing thread's (../thread-modes.ts); it may create the thread.
    cmd = { ...cmd, threadId: threadWithGrantModes(services, session.grant, cmd) };
    await mcp.readyWithin(); // MCP servers' tools join the first turn (mcp/manager.ts; bounded wait)
    // Rules (rules/): manual @rule tokens leave the prompt; the attached rules' block goes with the turn, not into the message.
    const r = await prepareRules(rules, cmd);
    // @-mentions become the prompt's context block (what the model sees and the thread keeps; context/).
    const prompt = await context.promptWithMentions(r.prompt, cmd.mentions, model);
    const ruled = { ...(r.names.length > 0 ? { rules: r.names } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) };
    // A prompt to a running thread waits its turn (behind any already waiting); an edit of an earlier message cannot.
    const queueable = cmd.threadId !== null && cmd.ifBusy !== 'refuse' && !cmd.parentMessageId;
    const enqueue = (threadId: string) => {
      // Queued as typed (its rule tokens kept): the queue prepares its rules when it starts (runs/queue.ts).
      const q = queue.enqueue(threadId, `${cmd.prompt}${prompt.slice(r.prompt.length)}`, cmd.model ?? null, cmd.steer === true);
      return { threadId, runId: null, queued: { entryId: q.entry.entryId, position: q.position }, ...ruled };
    };
    if (queueable && store.queue(cmd.threadId!).length > 0) return enqueue(cmd.threadId!);
    try {
      const h = runs.start({
        prompt, model,
        ...(cmd.threadId !== null ? { threadId: cmd.threadId } : {}),
        ...(cmd.parentMessageId ? { parentMessageId: cmd.parentMessageId } : {}),
        ...(r.names.length > 0 ? { rules: r.names, userRules: r.block } : {}),
        ...(cmd.handoff ? { handoff: checkChoice(cmd.handoff) } : {}),
      });
      return { threadId: h.threadId, runId: h.runId, queued: null, ...ruled, ...(r.prompt !== cmd.prompt ? { prompt: r.prompt } : {}) };
    } catch (e) {
      if (queueable && e instanceof RunError && e.code === 'threadBusy') return enqueue(cmd.threadId!);
      throw e;
    }
  },
  cancelRun({ services: { runs } }, cmd) {
    return { runId: cmd.runId, cancelled: runs.cancel(cmd.runId) };
  },
  cancelAllRuns({ services: { runs } }) {
    return { cancelled: runs.cancelAll() };
  },
  listRuns({ services: { runs, store } }, cmd) {
    return {
      runs: runs.active(cmd.threadId).map((r) => {
        const w = store.rateLimitWait(r.runId);
        return { ...r, waiting: w ? waitView(w) : null };
      }),
    };
  },
  listWaits({ services: { store } }) {
    const orphaned = new Set(store.orphanedWaits((r) => isLiveRun(r)).map((r) => r.id));
    const waits = store.waitingRuns().flatMap((r) => {
      const w = store.rateLimitWait(r.id);
      return w ? [{ runId: r.id, threadId: r.threadId, model: r.model, orphaned: orphaned.has(r.id), waiting: waitView(w) }] : [];
    });
    return { waits };
  },
  async resumeRun({ services: { runs, waits, providers } }, cmd) {
    // A wait whose process is gone is taken over here first (then it resumes at once).
    await runs.resumeOrphans((ref) => providers.resolve(ref), cmd.runId);
    waits.resumeNow(cmd.runId);
    return { runId: cmd.runId, waiting: null };
  },
  snoozeRun({ services: { waits } }, cmd) {
    return { runId: cmd.runId, waiting: waitView(waits.snooze(cmd.runId, cmd.forMs)) };
  },
  setAutoResume({ services: { waits } }, cmd) {
    return { runId: cmd.runId, waiting: waitView(waits.setAutoResume(cmd.runId, cmd.autoResume)) };
  },
  subscribeTurn({ services: { streams }, session }, cmd) {
    const target = `turn:${cmd.turnId}`;
    session.dropSubscription(target);
    const sendEnd = (end: TurnEnd) => {
      session.send({ type: 'turnEnded', turnId: cmd.turnId, status: end.status, ...(end.error ? { error: end.error } : {}) });
      session.dropSubscription(target);
    };
    const sendChunks = (chunks: TurnChunk[]) => session.send({ type: 'turnChunks', turnId: cmd.turnId, chunks });
    // maxDelayMs 0: no batching, each chunk goes out as it is appended (an in-process client has no wire to spare).
    const batcher = cmd.maxDelayMs === 0 ? null : new ChunkBatcher({ sendChunks, sendEnd }, cmd.maxDelayMs === undefined ? {} : { intervalMs: cmd.maxDelayMs });
    const subscriber = batcher ?? { onChunks: sendChunks, onEnd: sendEnd };
    const sub = streams.subscribeOrReplay(cmd.turnId, cmd.afterSeq, subscriber);
    session.addSubscription(target, () => {
      sub.unsubscribe();
      batcher?.dispose();
    });
    if (sub.replay.length > 0) sendChunks(sub.replay);
    if (sub.ended) subscriber.onEnd(sub.ended);
    return { target };
  },
};
