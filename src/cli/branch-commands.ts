/**
 * The conversation tree from the command line (protocol `getThreadTree`, `switchBranch`,
 * `regenerate`, `retry`, `editMessage`, `compareBranches`): `vox thread tree|branches|switch|
 * regenerate|retry|compare` and `vox message edit`. A command that starts a run (regenerate,
 * retry, editing a user message) streams it to the end like `vox chat` and exits like it: 0
 * completed, 1 failed, 130 cancelled; any of them (switch too) exits 75 when the thread is running
 * a turn, here or in another process.
 */
import type { Command } from 'commander';
import { quoteLine } from '../protocol/wire/quote';
import { ClientError, type EngineClient } from '../client/engine-client';
import type { MessageView } from '../protocol/commands/threads';
import type { CommandResult } from '../protocol/commands/index';
import { EXIT_THREAD_BUSY } from './chat-command';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { yesAnswer } from './permission-commands';

type BranchFlags = Flags & { cwd?: string; yes?: boolean };

/** Characters of a message shown per line of `vox thread tree`. */
const TREE_LINE_CHARS = 72;

const oneLine = (s: string) => quoteLine(s, TREE_LINE_CHARS);

/** The tree as indented lines (children under their parent, `*` on the active path). */
function treeText(t: CommandResult<'getThreadTree'>): string {
  const children = new Map<string | null, MessageView[]>();
  const ids = new Set(t.messages.map((m) => m.id));
  for (const m of t.messages) {
    const key = m.parentId !== null && ids.has(m.parentId) ? m.parentId : null;
    children.set(key, [...(children.get(key) ?? []), m]);
  }
  const active = new Set<string>();
  const byId = new Map(t.messages.map((m) => [m.id, m]));
  for (let id = t.headMessageId; id !== null; id = byId.get(id)?.parentId ?? null) active.add(id);
  const lines: string[] = [];
  const stack: Array<{ m: MessageView; depth: number }> = (children.get(null) ?? []).map((m) => ({ m, depth: 0 })).reverse();
  while (stack.length > 0) {
    const { m, depth } = stack.pop()!;
    const flags = `${active.has(m.id) ? '*' : ' '}${m.editedAt ? ' (edited)' : ''}${m.status === 'complete' ? '' : ` (${m.status})`}`;
    lines.push(`${'  '.repeat(depth)}${flags} ${m.id} ${m.role}: ${oneLine(m.content)}`);
    for (const c of [...(children.get(m.id) ?? [])].reverse()) stack.push({ m: c, depth: depth + 1 });
  }
  return lines.join('\n') || '(no messages)';
}

/** Streams a run this command started to its end; approvals are denied unless --yes. */
async function follow(client: EngineClient, runId: string, flags: BranchFlags): Promise<{ status: string; text: string }> {
  let text = '';
  const ended = new Promise<string>((resolve) => {
    client.on('turnChunks', (u) => {
      if (u.turnId !== runId) return;
      for (const c of u.chunks) {
        if (c.kind !== 'text') continue;
        text += c.data;
        if (!flags.json) process.stdout.write(c.data);
      }
    });
    client.on('turnEnded', (u) => void (u.turnId === runId && resolve(u.status)));
  });
  client.on('approvalRequested', (req) => {
    if (req.runId !== runId) return;
    const yes = flags.yes ? yesAnswer(req) : null;
    process.stderr.write(yes ? yes.note ?? '' : `[vox] denied ${req.toolName} (pass --yes to allow)\n`);
    void client.call('respondToApproval', { callId: req.callId, decision: yes?.decision ?? 'denied' }).catch(() => undefined);
  });
  await client.call('subscribeTurn', { turnId: runId, afterSeq: 0, maxDelayMs: 0 });
  const status = await ended;
  if (!flags.json) process.stdout.write('\n');
  return { status, text };
}

/** `run/threadBusy` (the thread runs a turn, here or in another process) exits 75 with the message; anything else is rethrown. */
function busyExit(e: unknown, flags: BranchFlags): number {
  if (!(e instanceof ClientError && e.is('run', 'threadBusy'))) throw e;
  process.stderr.write(`vox: ${e.message}\n`);
  if (flags.json) process.stdout.write(JSON.stringify({ error: { domain: e.domain, code: e.code, message: e.message, details: e.details } }) + '\n');
  return EXIT_THREAD_BUSY;
}

/** Starts a run through `start` (null: it started none), follows it, prints the outcome. */
async function startAndFollow(client: EngineClient, flags: BranchFlags, start: () => Promise<{ threadId: string; runId: string; userMessageId: string } | null>): Promise<number> {
  const started = await start();
  if (started === null) return 0; // nothing to run (an answer edited in place)
  const { status, text } = await follow(client, started.runId, flags);
  if (flags.json) process.stdout.write(JSON.stringify({ ...started, status, text }) + '\n');
  else process.stderr.write(`[vox] thread ${started.threadId} · new branch at ${started.userMessageId} · ${status}\n`);
  return status === 'completed' ? 0 : status === 'cancelled' ? 130 : 1;
}

export function registerBranchCommands(program: Command, run: (p: Promise<number>) => void): void {
  const common = (c: Command) => c.option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');
  const act = (fn: (client: EngineClient, flags: BranchFlags) => Promise<number>, reading = false) => (flags: BranchFlags) =>
    withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: !reading, queuePolicy: 'own', ...(reading ? { reading: true } : {}) }, ({ client }) => fn(client, flags).catch((e: unknown) => busyExit(e, flags)));

  const thread = program.command('thread').description('the conversation tree of a thread: tree | branches | switch | regenerate | retry | compare');
  common(thread.command('tree').description('every message of a thread, indented under its parent (* marks the active path)').argument('<threadId>'))
    .action((threadId: string, o: BranchFlags) => run(act(async (client, flags) => {
      const t = await client.call('getThreadTree', { threadId });
      print(flags, treeText(t), t);
      return 0;
    }, true)(o)));
  common(thread.command('branches').description('the branches of a thread (main, main-<msg>-<n>), the active one marked').argument('<threadId>'))
    .action((threadId: string, o: BranchFlags) => run(act(async (client, flags) => {
      const t = await client.call('getThreadTree', { threadId });
      const line = (b: (typeof t.branches)[number]) => `${b.active ? '*' : ' '} ${b.name}\t${b.branchId}\t${b.leafId}\t${b.length} messages\t${new Date(b.updatedAt).toISOString()}`;
      print(flags, t.branches.map(line).join('\n') || '(no messages)', t.branches);
      return 0;
    }, true)(o)));
  common(thread.command('switch').description('make the branch through a message the active one (its latest leaf)').argument('<threadId>').argument('<messageId>'))
    .action((threadId: string, messageId: string, o: BranchFlags) => run(act(async (client, flags) => {
      const r = await client.call('switchBranch', { threadId, toMessageId: messageId });
      print(flags, `head of ${threadId} is now ${r.headMessageId}`, r);
      return 0;
    })(o)));
  common(thread.command('regenerate').description('another answer to a prompt, as a sibling branch (default: the latest answer), streamed')
    .argument('<threadId>').option('--message <id>', 'the answer (or prompt) to regenerate').option('--run <id>', 'the run whose prompt to regenerate')
    .option('--model <ref>', 'another model than the original answer\'s').option('--yes', 'approve every tool call'))
    .action((threadId: string, o: BranchFlags & { message?: string; run?: string; model?: string }) => run(act((client, flags) => startAndFollow(client, flags, () => client.call('regenerate', {
      threadId, ...(o.message ? { messageId: o.message } : {}), ...(o.run ? { runId: o.run } : {}), ...(o.model ? { model: o.model } : {}),
    })))(o)));
  common(thread.command('retry').description('retry a failed, cancelled, interrupted or cut-off run, as a sibling branch, streamed').argument('<threadId>').argument('<runId>')
    .option('--model <ref>', 'another model than the original run\'s').option('--yes', 'approve every tool call'))
    .action((threadId: string, runId: string, o: BranchFlags & { model?: string }) => run(act((client, flags) => startAndFollow(client, flags, () => client.call('retry', {
      threadId, runId, ...(o.model ? { model: o.model } : {}),
    })))(o)));
  common(thread.command('compare').description('2 to 4 branches side by side (by leaf message): shared part, what follows, diffs of the final answers')
    .argument('<threadId>').argument('<leafIds...>'))
    .action((threadId: string, leafIds: string[], o: BranchFlags) => run(act(async (client, flags) => {
      const c = await client.call('compareBranches', { threadId, leafIds });
      const human = [
        `${c.shared.length} shared message(s)${c.divergence.messageId ? `, diverging after ${c.divergence.messageId}` : ''}`,
        ...c.columns.map((col) => `\n== ${col.name} (${col.branchId}, ${col.leafId})\n${col.messages.map((m) => `${m.role}: ${oneLine(m.content)}`).join('\n')}`),
        ...c.finalDiffs.map((d) => `\n${d.diff || `(final answers of ${d.against} and ${d.leafId} are the same)`}`),
      ].join('\n');
      print(flags, human, c);
      return 0;
    }, true)(o)));

  const message = program.command('message').description('edit a message: edit');
  common(message.command('edit').description('edit a message: an answer in place (marked edited), a prompt as a new branch (run at once, streamed)')
    .argument('<threadId>').argument('<messageId>').argument('<text...>').option('--model <ref>', 'prompts: another model than the original\'s').option('--yes', 'approve every tool call'))
    .action((threadId: string, messageId: string, words: string[], o: BranchFlags & { model?: string }) => run(act(async (client, flags) => {
      let inPlace: CommandResult<'editMessage'> | null = null;
      const code = await startAndFollow(client, flags, async () => {
        const r = await client.call('editMessage', { threadId, messageId, content: words.join(' '), ...(o.model ? { model: o.model } : {}) });
        if (r.runId === null) {
          inPlace = r;
          return null;
        }
        return { threadId, runId: r.runId, userMessageId: r.messageId };
      });
      if (inPlace) print(flags, `edited ${messageId} in place`, inPlace);
      return code;
    })(o)));
}
