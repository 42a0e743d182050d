/** `vox threads` (every top-level thread, paged through the protocol; `--of T`: T's subagent threads) and `vox show THREAD_ID`. */
import type { EngineClient } from '../client/engine-client';
import type { ThreadSummary } from '../protocol/commands/threads';
import { MAX_THREAD_PAGE } from '../protocol/commands/threads';
import { withClient } from './connect';
import { print, type Flags } from './output';

async function allThreads(client: EngineClient, limit: number | undefined): Promise<ThreadSummary[]> {
  const out: ThreadSummary[] = [];
  let before: string | undefined;
  for (;;) {
    const want = limit === undefined ? MAX_THREAD_PAGE : Math.min(MAX_THREAD_PAGE, limit - out.length);
    if (want <= 0) return out;
    const page = await client.call('listThreads', { limit: want, ...(before !== undefined ? { before } : {}) });
    out.push(...page.threads);
    if (page.nextCursor === null) return out;
    before = page.nextCursor;
  }
}

export function threads(flags: Flags & { cwd?: string; limit?: number; of?: string }): Promise<number> {
  return withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
    if (flags.of !== undefined) {
      const kids = (await client.call('listChildThreads', { threadId: flags.of })).threads;
      print(flags, kids.map((t) => `${t.id}\t${t.status ?? 'not started'}\t${t.title}`).join('\n') || '(no subagent threads)', kids);
      return 0;
    }
    const list = await allThreads(client, flags.limit);
    const line = (t: ThreadSummary) => `${t.id}\t${new Date(t.updatedAt).toISOString()}\t${t.title}${t.childCount ? `\t(+${t.childCount} subagent${t.childCount === 1 ? '' : 's'}: vox threads --of ${t.id})` : ''}`;
    print(flags, list.map(line).join('\n') || '(no threads)', list);
    return 0;
  });
}

export function show(threadId: string, flags: Flags & { cwd?: string }): Promise<number> {
  return withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
    const t = await client.call('getThread', { threadId });
    print(flags, t.messages.map((m) => `${m.role}${m.status === 'complete' ? '' : ` (${m.status})`}: ${m.content}`).join('\n\n'), t);
    return 0;
  });
}
