/**
 * `vox search QUERY [--limit n] [--json]`: thread titles (fuzzy) and message text / tool output
 * (the trigram index) matching QUERY (protocol `searchThreads`, SPEC 6.4). Human output
 * (./search-output.ts): the title matches, then the message matches, each as its thread's short
 * id and title, a message's snippet on one line under it (the match bold on a terminal); the
 * short id works wherever a command takes a thread id. `--json`: the protocol's answer, full ids.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { MAX_SEARCH_LIMIT } from '../protocol/commands/search';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { DEFAULT_SEARCH_WIDTH, searchLines } from './search-output';

type SearchFlags = Flags & { cwd?: string; limit?: number };

function parseLimit(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_SEARCH_LIMIT) throw new InvalidArgumentError(`--limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  return n;
}

export function registerSearchCommand(program: Command, run: (p: Promise<number>) => void): void {
  program.command('search')
    .description('search thread titles (fuzzy) and every message and tool output (substring, 3+ characters) of this workspace\'s threads')
    .argument('<query...>', 'what to look for (literal text: quotes, *, -, NEAR mean themselves)')
    .option('--limit <n>', `results per list (1-${MAX_SEARCH_LIMIT}, default 20)`, parseLimit)
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON: {titles, messages}')
    .action((words: string[], flags: SearchFlags) => {
      const query = words.join(' ');
      run(withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
        const result = await client.call('searchThreads', flags.limit === undefined ? { query } : { query, limit: flags.limit });
        const tty = process.stdout.isTTY === true;
        const lines = searchLines(result, { tty, width: tty && process.stdout.columns ? process.stdout.columns : DEFAULT_SEARCH_WIDTH });
        print(flags, lines.join('\n') || `(nothing matches "${query}")`, result);
        return 0;
      }));
    });
}
