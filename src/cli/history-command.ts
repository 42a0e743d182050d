/**
 * `vox history [--limit n] [--json]`: the prompt history (protocol `listPromptHistory`, SPEC 6.3),
 * the newest prompts sent from any client — the chat view and `vox chat` alike — newest last.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { MAX_PROMPT_HISTORY } from '../protocol/commands/history';
import { withClient } from './connect';
import { print, type Flags } from './output';

/** How much of a prompt one human-readable line shows. */
const PROMPT_PREVIEW_CHARS = 120;

type HistoryFlags = Flags & { cwd?: string; limit?: number };

function parseLimit(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PROMPT_HISTORY) throw new InvalidArgumentError(`--limit must be an integer from 1 to ${MAX_PROMPT_HISTORY}`);
  return n;
}

export function registerHistoryCommand(program: Command, run: (p: Promise<number>) => void): void {
  program.command('history')
    .description(`the last prompts sent (at most ${MAX_PROMPT_HISTORY}, newest last), from the chat view and vox chat`)
    .option('--limit <n>', `how many (1-${MAX_PROMPT_HISTORY})`, parseLimit)
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((flags: HistoryFlags) => {
      const limit = flags.limit;
      run(withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
        const { prompts } = await client.call('listPromptHistory', limit === undefined ? {} : { limit });
        const lines = prompts.map((p) => `${new Date(p.at).toISOString()}\t${p.threadId ?? '-'}\t${p.prompt.replace(/\s+/g, ' ').slice(0, PROMPT_PREVIEW_CHARS)}`);
        print(flags, lines.join('\n') || '(no prompts yet)', prompts);
        return 0;
      }));
    });
}
