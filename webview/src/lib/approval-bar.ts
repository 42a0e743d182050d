/**
 * The sticky approval bar's logic, pure (../components/ApprovalBar.svelte draws it): which of the
 * open thread's waiting approvals it shows (the one the user walked to, else the oldest), its
 * one-line summary, the labels of its keybindings, and the walk to the next one.
 */
import type { ApprovalView } from './app-model';

/**
 * The keybindings of the bar's actions, as package.json declares them for the chat's focus
 * (`vox.approveWaiting`, `vox.denyWaiting`; test/webview/approval-bar-browser.test.ts holds the two
 * to each other). VS Code runs them and posts `approveWaiting` / `denyWaiting` to the chat in front.
 */
export const APPROVAL_KEYS = {
  approve: { key: 'alt+enter', mac: 'cmd+alt+enter' },
  deny: { key: 'alt+shift+enter', mac: 'cmd+alt+shift+enter' },
} as const;

/** Longest summary of a call's arguments on the bar (the card has them all). */
export const BAR_SUMMARY_MAX_CHARS = 80;

/** A keybinding as the bar shows it: `alt+shift+enter` → `Alt+Shift+Enter` (`⌘⌥⇧Enter` on a Mac). */
export function keyLabel(binding: { key: string; mac: string }, mac: boolean): string {
  if (!mac) return binding.key.split('+').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('+');
  const symbols: Record<string, string> = { cmd: '⌘', alt: '⌥', shift: '⇧', ctrl: '⌃' };
  return binding.mac.split('+').map((p) => symbols[p] ?? p.charAt(0).toUpperCase() + p.slice(1)).join('');
}

/** The approval the bar shows: `focus` while it still waits, else the first (the oldest). */
export function shownApproval(waiting: readonly ApprovalView[], focus: string | null | undefined): { approval: ApprovalView; index: number } | null {
  if (waiting.length === 0) return null;
  const i = focus ? waiting.findIndex((a) => a.callId === focus) : -1;
  const index = i >= 0 ? i : 0;
  return { approval: waiting[index]!, index };
}

/** The call after the shown one (wrapping round), for Next. */
export function nextApproval(waiting: readonly ApprovalView[], focus: string | null | undefined): string | null {
  const shown = shownApproval(waiting, focus);
  if (!shown) return null;
  return waiting[(shown.index + 1) % waiting.length]!.callId;
}

/** What the call does, in one line: its path or command when it names one, else its arguments, cut. */
export function approvalSummary(a: Pick<ApprovalView, 'argumentsJson'>): string {
  let text = a.argumentsJson;
  try {
    const args: unknown = JSON.parse(a.argumentsJson);
    if (args && typeof args === 'object' && !Array.isArray(args)) {
      const o = args as Record<string, unknown>;
      const named = [o.command, o.path, o.file, o.url, o.query].find((v) => typeof v === 'string');
      text = typeof named === 'string' ? named : JSON.stringify(args);
    }
  } catch {
    // not JSON: shown as it is
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > BAR_SUMMARY_MAX_CHARS ? `${text.slice(0, BAR_SUMMARY_MAX_CHARS - 1)}…` : text;
}
