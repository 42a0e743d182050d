/**
 * The chat's own keyboard shortcuts, decided from a key event (pure: unit-tested in Node). VS Code
 * keybindings do not reach a webview view reliably: its `when` context (`focusedView`) is not set
 * while the focus is inside the view's frame, so in code-server Ctrl+Alt+N opened an untitled
 * file instead of a new thread — and VS Code's webview frame never forwards a Ctrl/⌘+V (it
 * counts as paste), so Ctrl+Alt+V did nothing there. The chat handles these keys itself (and stops them, so VS Code
 * does not run its own binding as well); package.json keeps the same keys for when the focus is
 * on the view's chrome. The keys match package.json's `keybindings`:
 *   - Alt+Enter (⌘⌥Enter on a Mac): approve the shown approval (or accept its edit);
 *   - Alt+Shift+Enter (⌘⌥⇧Enter): deny it;
 *   - Ctrl+Alt+N (⌘⌥N): a new thread;
 *   - Ctrl+Alt+V (⌘⌥V): the caret to the composer ("Vox: Focus Chat"; with a selection in an
 *     editor the same key is "Send Selection to Vox", which the editor's focus decides).
 */

export type ChatKeyAction = 'approve' | 'deny' | 'newThread' | 'focusComposer';

export interface KeyLike {
  key: string;
  code: string;
  altKey: boolean;
  shiftKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  isComposing?: boolean;
}

/** What a key press does in the chat, or null (the key goes on as usual). `mac`: the platform's modifier is ⌘. */
export function chatKeyAction(e: KeyLike, mac: boolean): ChatKeyAction | null {
  if (e.isComposing) return null;
  const primary = mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
  if (e.key === 'Enter' && e.altKey && (mac ? e.metaKey : !e.ctrlKey && !e.metaKey)) return e.shiftKey ? 'deny' : 'approve';
  if (e.code === 'KeyN' && e.altKey && primary && !e.shiftKey) return 'newThread';
  if (e.code === 'KeyV' && e.altKey && primary && !e.shiftKey) return 'focusComposer';
  return null;
}
