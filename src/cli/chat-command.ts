/**
 * `vox chat "prompt"`: sends the prompt through the protocol (`sendPrompt`), streams the turn
 * (`subscribeTurn`) to stdout, answers the run's approvals (`--yes`, a y/N question on a
 * terminal, or a denial when there is none) and prints the outcome. A prompt to a thread that is
 * already running a turn — in VS Code or another `vox chat` — is queued: the command says so,
 * waits for its turn (./queue-commands.ts) and then streams it; `--no-queue` refuses instead
 * (`run/threadBusy`, exit 75) and `--steer` lets the running turn take it at its next boundary.
 */
import * as readline from 'node:readline/promises';
import { ClientError } from '../client/engine-client';
import { DEMO_MODEL_NOTICE, isDemoModel } from '../engine/model/demo-model';
import { toolCallData } from '../protocol/chunks';
import { applyRevision, REVISION_KINDS } from '../protocol/revisions';
import type { PermissionInfo } from '../protocol/events';
import type { UpdateOf } from '../protocol/updates';
import { withClient } from './connect';
import { errorLabel } from './output';
import { waitForTurn } from './queue-commands';
import { yesAnswer } from './permission-commands';
import { overflowMessage, parseMention, runEndNotes } from './context-commands';
import type { HandoffStrategy } from '../protocol/handoff';

/** What decided a call, after its name: `· allowed by <rule>`, `· denied: <reason>`; nothing for an ask (the prompt follows). */
export function permissionNote(p: PermissionInfo | undefined): string {
  if (!p || p.decision === 'ask') return '';
  if (p.decision === 'deny') return ` · not run: ${p.reason}`;
  return p.rule ? ` · allowed by ${p.rule}` : ` · ${p.reason}`;
}

/** Exit code when the thread is busy (EX_TEMPFAIL: try again later). */
export const EXIT_THREAD_BUSY = 75;

export interface ChatFlags {
  model?: string; thread?: string; cwd?: string; yes?: boolean; json?: boolean; queue?: boolean; steer?: boolean;
  /** @-mentions (`file:PATH`, `git`, …; ./context-commands.ts). */
  mention?: string[];
  /** Send even when the estimate says the prompt does not fit the model's context window. */
  allowOverflow?: boolean;
  /** The permission mode of this run's engine (ask | autoEdits | fullAuto). */
  mode?: string;
  /** A context handoff strategy for this prompt (SPEC 5.1), and the text of manualContext. */
  handoff?: HandoffStrategy;
  handoffContext?: string;
}

export async function chat(prompt: string, flags: ChatFlags): Promise<number> {
  return withClient({ cwd: flags.cwd ?? process.cwd(), ...(flags.model ? { model: flags.model } : {}), ...(flags.mode ? { permissionMode: flags.mode } : {}), queuePolicy: 'own' }, async ({ client }) => {
    const settings = await client.call('getSettings', {});
    if (isDemoModel(settings.model) && !flags.json) process.stderr.write(`[vox] ${DEMO_MODEL_NOTICE}\n`);
    const mentions = (flags.mention ?? []).map(parseMention);
    if (!flags.allowOverflow) {
      const overflow = await overflowMessage(client, { threadId: flags.thread ?? null, draft: prompt, mentions, ...(flags.model ? { model: flags.model } : {}) });
      if (overflow) {
        process.stderr.write(`vox: ${overflow}\n`);
        return 1;
      }
    }
    let sent;
    try {
      sent = await client.call('sendPrompt', {
        threadId: flags.thread ?? null, prompt, ...(flags.model ? { model: flags.model } : {}), ...(mentions.length > 0 ? { mentions } : {}),
        ifBusy: flags.queue === false ? 'refuse' : 'queue', ...(flags.steer ? { steer: true } : {}),
        ...(flags.handoff ? { handoff: { strategy: flags.handoff, ...(flags.handoffContext !== undefined ? { manualContext: flags.handoffContext } : {}) } } : {}),
      });
    } catch (e) {
      if (e instanceof ClientError && e.is('run', 'threadBusy')) {
        process.stderr.write(`vox: ${e.message}\n`);
        return EXIT_THREAD_BUSY;
      }
      throw e;
    }
    const { threadId } = sent;
    // Rules (SPEC 6.1): which were attached, and @words that are neither a rule nor a known mention.
    for (const w of sent.warnings ?? []) process.stderr.write(`[vox] warning: ${w}\n`);
    if (sent.rules && sent.rules.length > 0 && !flags.json) process.stderr.write(`[vox] rules: ${sent.rules.join(', ')}\n`);
    let runId = sent.runId;
    if (sent.queued) {
      const { entryId, position } = sent.queued;
      const note = (msg: string, json: object) => (flags.json ? process.stdout.write(JSON.stringify({ ...json, threadId, entryId }) + '\n') : process.stderr.write(`[vox] ${msg}\n`));
      note(`thread ${threadId} is running a turn; your prompt is queued (${entryId}, position ${position + 1})${flags.steer ? ' and will steer it at its next step' : ''}. Waiting for its turn — Ctrl-C takes it out of the queue.`, { type: 'queued', position });
      const outcome = await waitForTurn(client, threadId, entryId);
      if (outcome.kind === 'cancelled') {
        note('your queued prompt was cancelled; it did not run.', { type: 'cancelled' });
        return 130;
      }
      if (outcome.kind === 'steered') {
        note(`your prompt steered the running turn${outcome.runId ? ` (${outcome.runId})` : ''}; its answer goes to that turn.`, { type: 'steered', runId: outcome.runId });
        return 0;
      }
      runId = outcome.runId;
    }
    if (runId === null) throw new Error('the prompt neither started nor queued');
    const rl = process.stdin.isTTY && !flags.yes && !flags.json ? readline.createInterface({ input: process.stdin, output: process.stderr }) : null;
    let text = '';
    const ended = new Promise<UpdateOf<'turnEnded'>>((resolve) => {
      client.on('turnChunks', (u) => {
        if (u.turnId !== runId) return;
        for (const c of u.chunks) {
          if (flags.json) process.stdout.write(JSON.stringify(c) + '\n');
          if (REVISION_KINDS.includes(c.kind)) text = applyRevision(text, c.kind, c.data); // a discarded refusal or salvaged calls leave the answer (SPEC 3.2)
          if (c.kind === 'text') {
            text += c.data;
            if (!flags.json) process.stdout.write(c.data);
          } else if (c.kind === 'status' && c.data && !flags.json) {
            process.stderr.write(`\n[vox] ${c.data}\n`); // e.g. rate limited, and when it retries
          } else if (c.kind === 'refusalRetry' && !flags.json) {
            process.stderr.write('\n[vox] retried after a refusal: the model said it could not use its tools; that reply is discarded\n');
          } else if (c.kind === 'toolCall' && !flags.json) {
            try {
              const call = toolCallData(JSON.parse(c.data));
              process.stderr.write(`\n[tool] ${call.name}${permissionNote(call.permission)}\n`);
            } catch {
              process.stderr.write('\n[tool] (unreadable call)\n');
            }
          }
        }
      });
      client.on('turnEnded', (u) => void (u.turnId === runId && resolve(u)));
    });
    client.on('approvalRequested', (req) => {
      if (req.runId !== runId) return;
      void (async () => {
        let decision: 'approved' | 'denied' = 'denied';
        const why = req.protectedPath && req.reason ? `[vox] ${req.reason}\n` : '';
        if (req.safeguard !== undefined) {
          // A safeguard failed (the checkpoint before a write): only a person at a terminal may go on without it, never --yes.
          const ask = process.stdin.isTTY && !flags.json ? (rl ?? readline.createInterface({ input: process.stdin, output: process.stderr })) : null;
          if (ask) decision = /^y(es)?$/i.test((await ask.question(`[vox] ${req.safeguard}; run ${req.toolName} anyway? [y/N] `)).trim()) ? 'approved' : 'denied';
          else process.stderr.write(`[vox] not run: ${req.toolName} — ${req.safeguard} (no terminal to ask)\n`);
          if (ask && ask !== rl) ask.close();
        } else if (flags.yes) {
          const yes = yesAnswer(req);
          decision = yes.decision;
          if (yes.note) process.stderr.write(yes.note);
        } else if (rl) {
          process.stderr.write(why);
          decision = /^y(es)?$/i.test((await rl.question(`[vox] allow ${req.toolName} ${req.argumentsJson}? [y/N] `)).trim()) ? 'approved' : 'denied';
        } else process.stderr.write(`${why}[vox] denied ${req.toolName} (no terminal to ask; pass --yes to allow)\n`);
        await client.call('respondToApproval', { callId: req.callId, decision }).catch(() => undefined); // the run may have ended meanwhile
      })();
    });
    await client.call('subscribeTurn', { turnId: runId, afterSeq: 0, maxDelayMs: 0 });
    const onSignal = () => void client.call('cancelRun', { runId }).catch(() => undefined);
    process.once('SIGINT', onSignal);
    const end = await ended;
    process.off('SIGINT', onSignal);
    rl?.close();
    const run = (await client.call('getThread', { threadId })).runs.find((r) => r.id === runId);
    const error = end.error ?? run?.error ?? null;
    const notes = await runEndNotes(client, threadId, runId);
    const usage = notes.usage ?? run?.usage ?? null;
    if (flags.json) process.stdout.write(JSON.stringify({ type: 'result', threadId, runId, status: end.status, text, error, ...(end.failure ? { failure: end.failure } : {}), usage: usage && { ...usage, ...(notes.estimated ? { estimated: true } : {}) }, stopReason: notes.stopReason }) + '\n');
    else {
      process.stdout.write('\n');
      const tokens = usage && (usage.inputTokens > 0 || usage.outputTokens > 0) ? ` · ${usage.inputTokens} in / ${usage.outputTokens} out${notes.estimated ? ' (estimated)' : ''}` : '';
      process.stderr.write(`[vox] thread ${threadId} · ${end.status}${tokens}${error ? ` · ${error}` : ''}\n`);
      if (end.failure && error) process.stderr.write(`vox: ${errorLabel(end.failure.domain, end.failure.code)}: ${error}\n`); // the typed error, as every command prints one
      if (notes.stopReason === 'length') process.stderr.write(`[vox] Stopped at the output-token limit: the reply is cut short. Continue with: vox chat --thread ${threadId} "Continue exactly where you stopped."\n`);
    }
    return end.status === 'completed' ? 0 : end.status === 'cancelled' ? 130 : 1;
  });
}
