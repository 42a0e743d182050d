/**
 * The thread queue from the command line: `vox queue list|edit|move|cancel|steer` (protocol queue
 * commands), and `waitForTurn`, which `vox chat` uses when its prompt was queued behind a running
 * turn — it waits (this process starts its own entry when the thread frees up, wherever the
 * running turn is) and says what became of the prompt. Ctrl-C while waiting takes the prompt out
 * of the queue.
 */
import type { Command } from 'commander';
import { LISTED_TEXT_CHARS, quoteLine } from '../protocol/wire/quote';
import type { EngineClient } from '../client/engine-client';
import type { QueuedPromptView } from '../protocol/commands/queue';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

/** How often a waiting `vox chat` asks what became of its queued prompt. */
export const QUEUE_WAIT_POLL_MS = 250;

export type TurnOutcome = { kind: 'started'; runId: string } | { kind: 'steered'; runId: string | null } | { kind: 'cancelled' };

/** Waits until the queued entry leaves the queue; Ctrl-C cancels it (and resolves 'cancelled'). */
export async function waitForTurn(client: EngineClient, threadId: string, entryId: string): Promise<TurnOutcome> {
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.once('SIGINT', onSignal);
  try {
    for (;;) {
      if (interrupted) {
        const cancelled = await client.call('cancelQueued', { threadId, entryId }).then(() => true, () => false);
        if (cancelled) return { kind: 'cancelled' };
        interrupted = false; // it left the queue meanwhile: report what it became
      }
      const { entry } = await client.call('getQueued', { entryId });
      if (entry.status === 'started' && entry.runId) return { kind: 'started', runId: entry.runId };
      if (entry.status === 'steered') return { kind: 'steered', runId: entry.runId };
      if (entry.status === 'cancelled') return { kind: 'cancelled' };
      await new Promise((r) => setTimeout(r, QUEUE_WAIT_POLL_MS));
    }
  } finally {
    process.off('SIGINT', onSignal);
  }
}

type QueueFlags = Flags & { cwd?: string };

const line = (e: QueuedPromptView) =>
  `${(e.position ?? 0) + 1}. ${e.entryId}${e.steer ? ' (steering)' : ''}${e.ownerPid === process.pid ? '' : ` [pid ${e.ownerPid}]`}\t${quoteLine(e.prompt, LISTED_TEXT_CHARS)}`;

function queueAction(reading: boolean, fn: (client: EngineClient) => Promise<{ human: string; json: unknown }>) {
  return (flags: QueueFlags) =>
    withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading }, async ({ client }) => {
      const out = await fn(client);
      print(flags, out.human, out.json);
      return 0;
    });
}

export function registerQueueCommands(program: Command, run: (p: Promise<number>) => void): void {
  const queue = program.command('queue').description('prompts waiting for a thread\'s running turn: list | edit | move | cancel | steer');
  const common = (c: Command) => c.option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');
  common(queue.command('list').description('the prompts waiting in a thread, next first').argument('<threadId>'))
    .action((threadId: string, o: QueueFlags) => run(queueAction(true, async (client) => {
      const { entries } = await client.call('listQueue', { threadId });
      return { human: entries.map(line).join('\n') || '(nothing queued)', json: entries };
    })(o)));
  common(queue.command('edit').description('replace a waiting prompt\'s text').argument('<threadId>').argument('<entryId>').argument('<prompt...>'))
    .action((threadId: string, entryId: string, words: string[], o: QueueFlags) => run(queueAction(false, async (client) => {
      await client.call('editQueued', { threadId, entryId, prompt: words.join(' ') });
      return { human: `edited ${entryId}`, json: { entryId, edited: true } };
    })(o)));
  common(queue.command('move').description('move a waiting prompt (position 1 = next)').argument('<threadId>').argument('<entryId>').argument('<position>'))
    .action((threadId: string, entryId: string, position: string, o: QueueFlags, cmd: Command) => run(queueAction(false, async (client) => {
      const n = Number(position);
      if (!Number.isInteger(n) || n < 1) throw new CliUsageError(`the position must be a whole number from 1, got ${JSON.stringify(position)}`, cmd);
      await client.call('moveQueued', { threadId, entryId, toIndex: n - 1 });
      return { human: `moved ${entryId} to position ${n}`, json: { entryId, position: n } };
    })(o)));
  common(queue.command('cancel').description('take a prompt out of the queue').argument('<threadId>').argument('<entryId>'))
    .action((threadId: string, entryId: string, o: QueueFlags) => run(queueAction(false, async (client) => {
      await client.call('cancelQueued', { threadId, entryId });
      return { human: `cancelled ${entryId}`, json: { entryId, cancelled: true } };
    })(o)));
  common(queue.command('steer').description('let the running turn take a waiting prompt at its next boundary, without stopping').argument('<threadId>').argument('<entryId>'))
    .action((threadId: string, entryId: string, o: QueueFlags) => run(queueAction(false, async (client) => {
      const r = await client.call('steerQueued', { threadId, entryId });
      const human = r.outcome === 'started' ? `the thread was idle: ${entryId} started as run ${r.runId}` : `${entryId} will steer the running turn at its next boundary`;
      return { human, json: { entryId, ...r } };
    })(o)));
}
