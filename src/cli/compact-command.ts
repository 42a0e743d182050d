/**
 * `vox thread compact <threadId> [--up-to ID | --from ID] [--model REF] [--json]` (protocol
 * `compactThread`, SPEC 3.7): the thread's model summarises the whole path, its start up to a
 * message, or a message to the end; the raw messages stay. Exits 75 when the thread is running a
 * turn (here or in another process), 1 on any other failure (an answer that is not a summary:
 * `compaction/invalidSummary`, nothing written).
 */
import type { Command } from 'commander';
import { ClientError } from '../client/engine-client';
import { EXIT_THREAD_BUSY } from './chat-command';
import { withClient } from './connect';
import { print, type Flags } from './output';

type CompactFlags = Flags & { cwd?: string; upTo?: string; from?: string; model?: string };


export function registerCompactCommand(program: Command, run: (p: Promise<number>) => void): void {
  const thread = program.commands.find((c) => c.name() === 'thread') ?? program.command('thread');
  thread.command('compact').description('compact a thread into a summary by its model: all of it, --up-to a message, or --from a message to the end')
    .argument('<threadId>')
    .option('--up-to <messageId>', 'compact from the start up to this message (included)')
    .option('--from <messageId>', 'compact from this message (included) to the end')
    .option('--model <ref>', 'summarise with this model instead of the thread\'s')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((threadId: string, o: CompactFlags) => {
      if (o.upTo && o.from) {
        process.stderr.write('vox: give --up-to or --from, not both\n');
        run(Promise.resolve(2));
        return;
      }
      run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own' }, async ({ client }) => {
        try {
          const mode = o.upTo ? 'upTo' as const : o.from ? 'from' as const : 'full' as const;
          const c = await client.call('compactThread', { threadId, mode, ...(o.upTo ?? o.from ? { messageId: (o.upTo ?? o.from)! } : {}), ...(o.model ? { model: o.model } : {}) });
          print(o, `compacted ${c.coveredMessages} message(s) of ${threadId} (${c.fromMessageId} … ${c.upToMessageId}) with ${c.model}${c.supersedes.length > 0 ? `, replacing ${c.supersedes.length} earlier compaction(s)` : ''}\n\n${c.summary}`, c);
          return 0;
        } catch (e) {
          if (!(e instanceof ClientError && e.is('run', 'threadBusy'))) throw e;
          process.stderr.write(`vox: ${e.message}\n`);
          if (o.json) process.stdout.write(JSON.stringify({ error: { domain: e.domain, code: e.code, message: e.message, details: e.details } }) + '\n');
          return EXIT_THREAD_BUSY;
        }
      }));
    });
}
