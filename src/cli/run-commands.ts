/**
 * `vox runs list|resume|snooze|auto-resume`: the runs waiting for a rate limit, in any process,
 * and the controls of a waiting run (protocol `listWaits`, `resumeRun`, `snoozeRun`,
 * `setAutoResume`). `resume` of a run whose process is gone takes it over in this process and
 * streams it to the end — how a wait left by a closed terminal is re-armed from the CLI.
 */
import type { Command } from 'commander';
import type { EngineClient } from '../client/engine-client';
import type { RateLimitWaitView } from '../protocol/commands/threads';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

type RunFlags = Flags & { cwd?: string };

const waitText = (w: RateLimitWaitView | null | undefined) =>
  !w ? '' : ` · rate limited, ${w.autoResume ? `resumes ${new Date(Math.max(w.resetAtMs, w.snoozedUntilMs ?? 0)).toISOString()}` : 'auto-resume off'}`;

/** Streams a run this process took over until it ends (status lines to stderr). */
async function follow(client: EngineClient, runId: string): Promise<string> {
  const ended = new Promise<string>((resolve) => {
    client.on('turnChunks', (u) => {
      if (u.turnId !== runId) return;
      for (const c of u.chunks) {
        if (c.kind === 'text') process.stdout.write(c.data);
        else if (c.kind === 'status' && c.data) process.stderr.write(`\n[vox] ${c.data}\n`);
      }
    });
    client.on('turnEnded', (u) => void (u.turnId === runId && resolve(u.status)));
  });
  await client.call('subscribeTurn', { turnId: runId, afterSeq: 0, maxDelayMs: 0 });
  return ended;
}

export function registerRunCommands(program: Command, run: (p: Promise<number>) => void): void {
  const runs = program.command('runs').description('rate-limit waits of runs: list | resume | snooze | auto-resume');
  const common = (c: Command) => c.option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');
  const act = (fn: (client: EngineClient, flags: RunFlags) => Promise<number>) => (flags: RunFlags) =>
    withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own' }, ({ client }) => fn(client, flags));

  common(runs.command('list').description('the runs waiting for a rate limit, in every process (orphaned: its process is gone)'))
    .action((o: RunFlags) => run(act(async (client, flags) => {
      const { waits } = await client.call('listWaits', {});
      print(flags, waits.map((w) => `${w.runId}\t${w.threadId}\t${w.model}${waitText(w.waiting)}${w.orphaned ? ' · orphaned (vox runs resume takes it over)' : ''}`).join('\n') || '(no run is waiting for a rate limit)', waits);
      return 0;
    })(o)));
  common(runs.command('resume').description('resume a rate-limited run now (one left by a closed window or terminal runs here, streaming)').argument('<runId>'))
    .action((runId: string, o: RunFlags) => run(act(async (client, flags) => {
      await client.call('resumeRun', { runId });
      const here = (await client.call('listRuns', {})).runs.some((r) => r.runId === runId);
      if (!here) {
        print(flags, `resumed ${runId} (it runs in the process that owns it)`, { runId, resumed: true, here: false });
        return 0;
      }
      if (!flags.json) process.stderr.write(`[vox] took over ${runId}; it runs here now\n`);
      const status = await follow(client, runId);
      if (flags.json) process.stdout.write(JSON.stringify({ runId, resumed: true, here: true, status }) + '\n');
      else process.stdout.write('\n');
      return status === 'completed' ? 0 : status === 'cancelled' ? 130 : 1;
    })(o)));
  common(runs.command('snooze').description('a rate-limited run does not resume for this many minutes').argument('<runId>').argument('<minutes>'))
    .action((runId: string, minutes: string, o: RunFlags, cmd: Command) => run(act(async (client, flags) => {
      const m = Number(minutes);
      if (!Number.isFinite(m) || m < 0) throw new CliUsageError(`the minutes must be a non-negative number, got ${JSON.stringify(minutes)}`, cmd);
      const r = await client.call('snoozeRun', { runId, forMs: Math.round(m * 60_000) });
      print(flags, `${runId}${waitText(r.waiting)}`, r);
      return 0;
    })(o)));
  common(runs.command('auto-resume').description('turn automatic resume of a rate-limited run on or off').argument('<runId>').argument('<on|off>'))
    .action((runId: string, onOff: string, o: RunFlags, cmd: Command) => run(act(async (client, flags) => {
      if (onOff !== 'on' && onOff !== 'off') throw new CliUsageError(`expected on or off, got ${JSON.stringify(onOff)}`, cmd);
      const r = await client.call('setAutoResume', { runId, autoResume: onOff === 'on' });
      print(flags, `${runId}${waitText(r.waiting)}`, r);
      return 0;
    })(o)));
}
