/**
 * `vox thread fork <threadId> [--at <messageId>] [--json]` (protocol `forkThread`): the thread's
 * path up to a message (default: its head) copied into a new thread "Fork of …", MCP App states
 * included; and `vox thread app-state <threadId> <itemId> <state> [--json]` (protocol
 * `setMcpAppState`, SPEC 5.3): saves an MCP App's state (≤ 16 KiB UTF-8; `-` reads it from stdin).
 */
import type { Command } from 'commander';
import { withClient } from './connect';
import { print, type Flags } from './output';

type ForkFlags = Flags & { cwd?: string; at?: string };

async function readStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Adds `fork` and `app-state` to the `vox thread` group (registered by ./branch-commands.ts, which must run first). */
export function registerForkCommands(program: Command, run: (p: Promise<number>) => void): void {
  const thread = program.commands.find((c) => c.name() === 'thread');
  if (!thread) throw new Error('vox thread must be registered before vox thread fork');
  thread.command('fork').description('copy the thread up to a message (default: its head) into a new thread "Fork of …", MCP App states included')
    .argument('<threadId>')
    .option('--at <messageId>', 'the last message the fork copies (default: the thread\'s head)')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((threadId: string, o: ForkFlags) => run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own' }, async ({ client }) => {
      const r = await client.call('forkThread', { threadId, ...(o.at ? { messageId: o.at } : {}) });
      print(o, `${r.threadId}\t${r.title}\n${r.messages} messages, ${r.runs} runs, ${r.appStates} MCP App states copied`, r);
      return 0;
    })));
  thread.command('app-state').description('save the state (at most 16 KiB of UTF-8) of the MCP App a tool call returned; "-" reads it from stdin')
    .argument('<threadId>').argument('<itemId>').argument('<state>')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((threadId: string, itemId: string, state: string, o: ForkFlags) => run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own' }, async ({ client }) => {
      const text = state === '-' ? await readStdin() : state;
      const r = await client.call('setMcpAppState', { threadId, itemId, state: text });
      print(o, `saved ${r.bytes} of ${r.max} bytes`, r);
      return 0;
    })));
}
