/**
 * The context capability on the command line: `vox context [draft...]` prints how much of the
 * model's context window the next request would use (protocol `estimateContext`), `vox mentions
 * <query>` what an @-mention may name (`suggestMentions`), and the `--mention` flag `vox chat` and
 * `vox context` share (`file:PATH`, `folder:PATH`, `git`, `git:COMMIT`, `thread:ID`, `problems`,
 * `terminal`, `selection`). Also the notes `vox chat` prints about a run's end: the output-token
 * limit, and usage that Vox estimated.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { EngineClient } from '../client/engine-client';
import type { CommandResult } from '../protocol/commands/index';
import { MENTION_KINDS, type Mention, type MentionKind } from '../protocol/mentions';
import { withClient } from './connect';
import { print, type Flags } from './output';

/** `file:src/a.ts` → {kind: 'file', target: 'src/a.ts'}; `git` → {kind: 'git'}. A bad kind is refused as the option's value (a usage error, exit 2). */
export function parseMention(spec: string): Mention {
  const i = spec.indexOf(':');
  const kind = (i < 0 ? spec : spec.slice(0, i)) as MentionKind;
  if (!MENTION_KINDS.includes(kind)) throw new InvalidArgumentError(`the kind must be one of ${MENTION_KINDS.join(', ')} (e.g. file:src/app.ts, git:HEAD~1)`);
  const target = i < 0 ? undefined : spec.slice(i + 1);
  return target ? { kind, target } : { kind };
}

/** The `--mention` option's parser: each value is checked as it is read, and collected. */
export const collectMention = (value: string, previous: string[] = []) => {
  parseMention(value);
  return [...previous, value];
};

export function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k` : String(n);
}

export function estimateLine(e: CommandResult<'estimateContext'>): string {
  const of = e.window !== null ? ` / ${formatTokens(e.window)} (${Math.round((e.tokens / e.window) * 100)}%)` : ' (context window unknown)';
  return `${formatTokens(e.tokens)} tokens${of} · ${e.model} · counted with ${e.source}`;
}

/** The overflow check `vox chat` makes before sending; null when it fits or cannot be estimated (sending reports its own errors). */
export async function overflowMessage(client: EngineClient, p: { threadId: string | null; draft: string; mentions: Mention[]; model?: string }): Promise<string | null> {
  let e;
  try {
    e = await client.call('estimateContext', { threadId: p.threadId, draft: p.draft, mentions: p.mentions, ...(p.model ? { model: p.model } : {}) });
  } catch {
    return null;
  }
  if (e.fits) return null;
  return `this prompt needs about ${formatTokens(e.tokens)} tokens, more than ${e.model}'s context window of ${formatTokens(e.window ?? 0)}: it would be refused or cut. Remove mentions or history (a new thread), or pass --allow-overflow to send it anyway.`;
}

/** What `vox chat` says after the run: the output limit (with how to continue) and estimated usage. */
export async function runEndNotes(client: EngineClient, threadId: string, runId: string): Promise<{ stopReason: string | null; estimated: boolean; usage: { inputTokens: number; outputTokens: number } | null }> {
  let found: { stopReason: string | null; estimated: boolean; usage: { inputTokens: number; outputTokens: number } | null } = { stopReason: null, estimated: false, usage: null };
  const off = client.on('events', (u) => {
    if (u.threadId !== threadId) return;
    for (const raw of u.events) {
      const ev = raw as { type?: string; runId?: string; stopReason?: string; usage?: { inputTokens: number; outputTokens: number; estimated?: boolean } };
      if (ev.type === 'run.ended' && ev.runId === runId) {
        found = { stopReason: ev.stopReason ?? null, estimated: ev.usage?.estimated === true, usage: ev.usage ? { inputTokens: ev.usage.inputTokens, outputTokens: ev.usage.outputTokens } : null };
      }
    }
  });
  try {
    const { target } = await client.call('subscribeThread', { threadId, afterSeq: 0 });
    await client.call('unsubscribe', { target });
  } finally {
    off();
  }
  return found;
}

type ContextFlags = Flags & { cwd?: string; thread?: string; model?: string; mention?: string[] };

export function registerContextCommands(program: Command, run: (p: Promise<number>) => void): void {
  program.command('context').description('how much of the model\'s context window the next request would use').argument('[draft...]')
    .option('--thread <id>', 'the thread the prompt would go to (default: a new one)').option('--model <ref>', 'model (default $VOX_MODEL or local:demo)')
    .option('--mention <spec>', 'attach: file:PATH, folder:PATH, git, git:COMMIT, thread:ID (repeatable)', collectMention)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((words: string[], o: ContextFlags) => run((async () => {
      const mentions = (o.mention ?? []).map(parseMention);
      return withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own', ...(o.model ? { model: o.model } : {}) }, async ({ client }) => {
        const e = await client.call('estimateContext', { threadId: o.thread ?? null, draft: words.join(' '), mentions, ...(o.model ? { model: o.model } : {}) });
        const chips = e.mentions.map((c) => `  @${c.kind} ${c.label} · ${formatTokens(c.tokens)} tokens${c.warning ? ` · ${c.status === 'warning' ? 'WARNING' : 'note'}: ${c.warning}` : ''}`);
        print(o, [estimateLine(e), ...(e.fits ? [] : ['does NOT fit: the model would refuse or cut this request']), ...chips].join('\n'), e);
        return e.fits ? 0 : 1;
      });
    })()));
  program.command('mentions').description('what an @-mention may name: files and folders (fuzzy, .gitignore-aware), problems, terminal, git, selection, threads')
    .argument('[query]', 'what follows the @', '').option('--limit <n>', 'at most this many', (v) => Number(v))
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((query: string, o: Flags & { cwd?: string; limit?: number }) => run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own' }, async ({ client }) => {
      const { items } = await client.call('suggestMentions', { query, ...(o.limit ? { limit: o.limit } : {}) });
      print(o, items.map((i) => `@${i.kind === 'file' || i.kind === 'folder' ? '' : i.kind === 'thread' ? 'thread ' : ''}${i.label}\t${i.detail}${i.target && i.kind === 'thread' ? `\t${i.target}` : ''}`).join('\n'), { items });
      return 0;
    })));
}
