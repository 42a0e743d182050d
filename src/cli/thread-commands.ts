/** `vox threads` (every thread, paged through the protocol) and `vox show THREAD_ID`. */
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

export function threads(flags: Flags & { cwd?: string; limit?: number }): Promise<number> {
  return withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
    const list = await allThreads(client, flags.limit);
    print(flags, list.map((t) => `${t.id}\t${new Date(t.updatedAt).toISOString()}\t${t.title}`).join('\n') || '(no threads)', list);
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
