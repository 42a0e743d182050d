/**
 * A code block's buttons that act in the editor: Insert at Cursor and Apply to File, posted to
 * the extension host as `codeAction` messages (src/protocol/host.ts; the extension does the
 * edit, src/extension/code-actions/). main.ts sets the sink to the VS Code bridge. Apply names the
 * file the block names (../code/languages.ts `namedPath`); a "path:" first-line comment that named
 * it is a marker, not content, so it is left out of what is applied.
 */
import type { CodeActionMessage } from '../../../../src/protocol/host';
import { namedPath } from './languages';

let sink: ((m: CodeActionMessage) => void) | null = null;

export function setCodeActionSink(fn: ((m: CodeActionMessage) => void) | null): void {
  sink = fn;
}

/** The message for a block's button (pure: the tests check it). */
export function codeActionFor(action: CodeActionMessage['action'], code: string, info: string, lang: string): CodeActionMessage {
  if (action === 'insertAtCursor') return { type: 'codeAction', action, code, ...(lang ? { lang } : {}) };
  const path = namedPath(info, code);
  const fromComment = path !== null && namedPath(info.split(/\s+/)[0] ?? '', code) === path;
  const body = !fromComment ? code : code.includes('\n') ? code.slice(code.indexOf('\n') + 1) : '';
  return { type: 'codeAction', action, code: body, ...(path ? { path } : {}), ...(lang ? { lang } : {}) };
}

/** Posts a block's action; false when there is no host to take it (a page outside VS Code). */
export function postCodeAction(message: CodeActionMessage): boolean {
  if (!sink) return false;
  sink(message);
  return true;
}
