/** Handlers of the run commands (../../../protocol/commands/runs.ts). */
import { ChunkBatcher } from '../../stream/chunk-batcher';
import { waitView } from '../../runs/rate-limit';
import { isLiveRun } from '../../runs/registry';
import type { TurnChunk, TurnEnd } from '../../stream/turn-stream-registry';
import type { CommandOf, CommandResult } from '../../../protocol/commands/index';
import type { EngineServices } from '../../services';
import type { HandlerTable } from './types';
import { checkChoice } from '../../handoff/apply';
import { startTurn, type TurnStartOutcome, type TurnStartRequest } from '../../runs/start-turn';
import { sessionTurnPorts } from '../turn-ports';
import { recordSentPrompt } from './history';

/**
 * A client's prompt as a turn start (../../runs/start-turn.ts): its rules (the paths of its file
 * and folder mentions attach `paths` rules, their labels are known mentions; manual @rule tokens
 * leave the prompt, the rules' block goes with the turn) and its @-mentions (the context block
 * the model sees and the thread keeps, context/) are prepared once the cheap checks passed.
 */
function promptTurn(services: EngineServices, cmd: CommandOf<'sendPrompt'>): TurnStartRequest {
  const { rules, context } = services;
  const targets = (cmd.mentions ?? []).filter((m) => (m.kind === 'file' || m.kind === 'folder') && m.target).map((m) => m.target!);
  return {
    threadId: cmd.threadId, prompt: cmd.prompt, model: cmd.model ?? null, ifBusy: cmd.ifBusy ?? 'queue', steer: cmd.steer === true,
    what: `prompt thread ${cmd.threadId}`,
    ...(cmd.parentMessageId ? { parentMessageId: cmd.parentMessageId } : {}),
    ...(cmd.newThread ? { newThread: cmd.newThread } : {}),
    ...(cmd.handoff ? { run: { handoff: checkChoice(cmd.handoff) } } : {}),
    prepare: async (model, threadId) => {
      const r = await rules.prepare(cmd.prompt, targets, threadId, targets);
      const prompt = await context.promptWithMentions(r.prompt, cmd.mentions, model, cmd.strictMentions === true);
      // Queued as typed (its rule tokens kept): the queue prepares its rules when it starts (runs/queue.ts).
      return { prompt, text: r.prompt, queuedPrompt: `${cmd.prompt}${prompt.slice(r.prompt.length)}`, rules: r.names, rulesBlock: r.block, warnings: r.warnings };
    },
  };
}

/** sendPrompt's answer for what became of the turn. */
function sent(cmd: CommandOf<'sendPrompt'>, out: TurnStartOutcome): CommandResult<'sendPrompt'> {
  if (out.kind === 'waiting') throw new Error('a sent prompt is never one already queued'); // ifBusy is never 'wait' here
  const p = out.prepared;
  const ruled = { ...(p.rules.length > 0 ? { rules: p.rules } : {}), ...(p.warnings.length > 0 ? { warnings: p.warnings } : {}) };
  if (out.kind === 'queued') return { threadId: out.threadId, runId: null, queued: { entryId: out.entryId, position: out.position }, ...ruled };
  return { threadId: out.handle.threadId, runId: out.handle.runId, queued: null, ...ruled, ...(p.text !== cmd.prompt ? { prompt: p.text } : {}) };
}

type RunCommand = 'sendPrompt' | 'cancelRun' | 'cancelAllRuns' | 'listRuns' | 'subscribeTurn' | 'resumeRun' | 'snoozeRun' | 'setAutoResume' | 'listWaits';

export const runHandlers: HandlerTable<RunCommand> = {
  /** The turn (started or queued; a new thread's modes and a limited grant's ceiling decided with it), then the prompt history's step. */
  async sendPrompt({ services, session }, cmd) {
    let out: CommandResult<'sendPrompt'>;
    try {
      out = sent(cmd, await startTurn(sessionTurnPorts(services, session.grant), promptTurn(services, cmd)));
    } catch (e) {
      recordSentPrompt(services.store, cmd, cmd.threadId);
      throw e;
    }
    recordSentPrompt(services.store, cmd, out.threadId);
    return out;
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
      session.send({ type: 'turnEnded', turnId: cmd.turnId, status: end.status, ...(end.error ? { error: end.error } : {}), ...(end.failure ? { failure: end.failure } : {}) });
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
