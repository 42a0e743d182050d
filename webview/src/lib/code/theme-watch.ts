/**
 * VS Code's theme kind in the webview: read from document.body's class (vscode-dark, vscode-light,
 * vscode-high-contrast, vscode-high-contrast-light), and watched (one MutationObserver for every
 * code block) so blocks re-highlight when the user switches theme. DOM code: the components use
 * it; Node tests use ./languages.ts's `themeKindOf`.
 */
import { themeKindOf, type ThemeKind } from './languages';

const themeListeners = new Set<(kind: ThemeKind) => void>();
let observer: MutationObserver | null = null;

/** The theme kind now (from document.body's class). */
export function currentThemeKind(): ThemeKind {
  return themeKindOf(document.body.classList);
}

/** Calls `fn` when VS Code switches theme (the body's class changes kind); returns the unsubscribe. */
export function onThemeChange(fn: (kind: ThemeKind) => void): () => void {
  themeListeners.add(fn);
  if (!observer) {
    let last = currentThemeKind();
    observer = new MutationObserver(() => {
      const kind = currentThemeKind();
      if (kind === last) return;
      last = kind;
      for (const l of [...themeListeners]) l(kind);
    });
    observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }
  return () => {
    themeListeners.delete(fn);
    if (themeListeners.size === 0) {
      observer?.disconnect();
      observer = null;
    }
  };
}
