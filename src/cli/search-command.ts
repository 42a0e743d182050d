/**
 * `vox search QUERY [--limit n] [--json]`: thread titles (fuzzy) and message text / tool output
 * (the trigram index) matching QUERY (protocol `searchThreads`, SPEC 6.4). Human output: the
 * title matches, then the message matches with their snippet, the match marked with »…«.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { MAX_SEARCH_LIMIT, type MessageHit } from '../protocol/commands/search';
import { withClient } from './connect';
import { print, type Flags } from './output';

type SearchFlags = Flags & { cwd?: string; limit?: number };

function parseLimit(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_SEARCH_LIMIT) throw new InvalidArgumentError(`--limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  return n;
}

/** The snippet with each matched span between » and «. */
export function markSnippet(hit: Pick<MessageHit, 'snippet' | 'ranges'>): string {
  let out = '';
  let at = 0;
  for (const r of hit.ranges) {
    out += `${hit.snippet.slice(at, r.start)}»${hit.snippet.slice(r.start, r.end)}«`;
    at = r.end;
  }
  return out + hit.snippet.slice(at);
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
        const lines: string[] = [];
        if (result.titles.length > 0) {
          lines.push('Threads:');
          for (const t of result.titles) lines.push(`  ${t.threadId}\t${t.score.toFixed(2)}\t${t.title}`);
        }
        if (result.messages.length > 0) {
          lines.push('Messages:');
          for (const m of result.messages) {
            lines.push(`  ${m.threadId}\t${m.messageId ?? '-'}\t${m.source === 'tool' ? '[tool output] ' : ''}${m.threadTitle}`);
            lines.push(`    ${markSnippet(m)}`);
          }
        }
        print(flags, lines.join('\n') || `(nothing matches "${query}")`, result);
        return 0;
      }));
    });
}
