/**
 * "Vox: Search Threads" (SPEC 6.4): a QuickPick that searches thread titles and every message and
 * tool output as you type (debounced; protocol `searchThreads`, the same command as the chat's
 * search box and `vox search`), shows titles and message snippets best first, and opens the
 * picked thread in the sidebar chat at the message (hostCommand openThread + messageId: the
 * webview scrolls its virtualised list to the message and highlights it).
 */
import * as vscode from 'vscode';
import type { MessageHit, TitleHit } from '../protocol/commands/search';
import type { ChatViews } from './chat-view';
import type { ExtensionContribution } from './contribution';
import type { EngineHost } from './engine-host';

/** Quiet time after a keystroke before the QuickPick searches (ms). */
export const QUICK_PICK_DEBOUNCE_MS = 150;
/** Results asked per list. */
export const QUICK_PICK_LIMIT = 30;

export interface SearchPickItem extends vscode.QuickPickItem {
  threadId: string;
  messageId: string | null;
  score: number;
}

/** A snippet for a QuickPick line: the matched spans kept, white space collapsed. */
function snippetLine(m: MessageHit): string {
  return m.snippet.replace(/\s+/g, ' ').trim();
}

/** Titles and messages as QuickPick items, best first (scores share a scale). */
export function pickItems(titles: readonly TitleHit[], messages: readonly MessageHit[]): SearchPickItem[] {
  const items: SearchPickItem[] = [
    ...titles.map((t) => ({ label: `$(comment-discussion) ${t.title}`, description: 'thread title', threadId: t.threadId, messageId: null, score: t.score, alwaysShow: true })),
    ...messages.map((m) => ({
      label: `$(${m.source === 'tool' ? 'tools' : 'comment'}) ${snippetLine(m)}`,
      description: m.threadTitle,
      detail: m.source === 'tool' ? 'tool output' : undefined,
      threadId: m.threadId, messageId: m.messageId, score: m.score, alwaysShow: true,
    })),
  ];
  return items.sort((a, b) => b.score - a.score);
}

export const searchThreadsCommand: ExtensionContribution = {
  name: 'thread search',
  commands: ['vox.searchThreads'],
  activate({ host, chats, log }, scope) {
    scope.command('vox.searchThreads', () => searchThreads(host, chats, log), { log });
  },
};

async function searchThreads(host: EngineHost, chats: ChatViews, log: vscode.LogOutputChannel): Promise<void> {
  const client = await host.client();
  const qp = vscode.window.createQuickPick<SearchPickItem>();
  qp.placeholder = 'Search thread titles, messages and tool output';
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  let timer: NodeJS.Timeout | undefined;
  let asked = 0;
  qp.onDidChangeValue((value) => {
    if (timer) clearTimeout(timer);
    const q = value.trim();
    if (q.length === 0) {
      qp.items = [];
      qp.busy = false;
      return;
    }
    timer = setTimeout(() => {
      const mine = ++asked;
      qp.busy = true;
      client.call('searchThreads', { query: q, limit: QUICK_PICK_LIMIT }).then((r) => {
        if (mine !== asked) return; // a newer query was asked meanwhile
        qp.items = pickItems(r.titles, r.messages);
        if (qp.items.length === 0) qp.items = [{ label: `Nothing matches “${q}”`, threadId: '', messageId: null, score: 0, alwaysShow: true }];
      }, (e: unknown) => {
        if (mine !== asked) return;
        log.warn(`search failed: ${e instanceof Error ? e.message : String(e)}`);
        qp.items = [{ label: `Search failed: ${e instanceof Error ? e.message : String(e)}`, threadId: '', messageId: null, score: 0, alwaysShow: true }];
      }).finally(() => {
        if (mine === asked) qp.busy = false;
      });
    }, QUICK_PICK_DEBOUNCE_MS);
  });
  qp.onDidAccept(() => {
    const pick = qp.selectedItems[0];
    if (!pick || !pick.threadId) return;
    qp.hide();
    void chats.toSidebar({ type: 'hostCommand', command: 'openThread', threadId: pick.threadId, ...(pick.messageId ? { messageId: pick.messageId } : {}) });
  });
  qp.onDidHide(() => {
    if (timer) clearTimeout(timer);
    qp.dispose();
  });
  qp.show();
}
