/**
 * What Vox says when something needs the user while no chat is visible: a run ended (completed,
 * failed, cancelled, interrupted) or a tool call waits for approval. Pure (no `vscode`), so the
 * wording and the rules are tested without a window: subagent threads and variant runs are
 * reported through their parent, never on their own; cancelled runs were the user's doing.
 */
import type { ApprovalRequestView, RunSummary, ThreadSummary } from '../../protocol/commands/index';

/** The longest thread title quoted in a notification (characters). */
export const MAX_TITLE_IN_NOTICE = 60;
/** The longest error or argument excerpt quoted in a notification (characters). */
export const MAX_DETAIL_IN_NOTICE = 120;

export interface Attention {
  /** The notification's text. */
  text: string;
  /** How it is shown: failures and approvals as warnings, the rest as information. */
  level: 'info' | 'warning';
  /** The thread the "Open" button opens. */
  threadId: string;
}

function clip(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

function tokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** The notice for a run that ended, or null when there is nothing to tell (cancelled, a subagent's, a variant's, still running). */
export function runEndedAttention(thread: ThreadSummary, run: RunSummary, opts: { isVariant?: boolean } = {}): Attention | null {
  if (thread.parentThreadId || opts.isVariant) return null;
  if (run.status === 'running' || run.status === 'cancelled') return null;
  const title = `"${clip(thread.title, MAX_TITLE_IN_NOTICE)}"`;
  const used = run.usage.inputTokens + run.usage.outputTokens;
  const usage = used > 0 ? ` (${tokens(run.usage.inputTokens)} in, ${tokens(run.usage.outputTokens)} out)` : '';
  if (run.status === 'completed') return { text: `Vox finished ${title}${usage}.`, level: 'info', threadId: thread.id };
  const why = run.error ? `: ${clip(run.error, MAX_DETAIL_IN_NOTICE)}` : '.';
  const verb = run.status === 'failed' ? 'failed' : 'was interrupted';
  return { text: `Vox ${verb} in ${title}${why}`, level: 'warning', threadId: thread.id };
}

/** The notice for a tool call waiting for approval. */
export function approvalAttention(thread: ThreadSummary, req: ApprovalRequestView): Attention {
  let what = req.toolName;
  try {
    const args = JSON.parse(req.argumentsJson) as Record<string, unknown>;
    const detail = typeof args.command === 'string' ? args.command : typeof args.path === 'string' ? args.path : undefined;
    if (detail) what += ` ${clip(detail, MAX_DETAIL_IN_NOTICE)}`;
  } catch {
    // arguments that are not JSON: the tool's name says enough
  }
  return { text: `Vox waits for your approval in "${clip(thread.title, MAX_TITLE_IN_NOTICE)}": ${what}`, level: 'warning', threadId: thread.id };
}
