/**
 * Highlighting a code block: the fence's language to a grammar, the theme from VS Code's body
 * class (re-highlighted when it changes), and the tokens from shiki — whose module, grammars and
 * themes are separate chunks loaded the first time a block needs them (./shiki-loader.ts), so the
 * webview's first load does not carry them. The schedule and thresholds are in ./languages.ts.
 */
import { grammarFor, themeKindOf, type HighlightedLine, type ThemeKind } from './languages';

export * from './languages';

/** Tokens of `code` (lines of coloured tokens), or null when its language has no grammar here. */
export async function highlightCode(code: string, lang: string, theme: ThemeKind): Promise<HighlightedLine[] | null> {
  const id = grammarFor(lang);
  if (!id) return null;
  const shiki = await import('./shiki-loader');
  return shiki.tokenize(code, id, theme);
}

/** The grammars loaded so far (none before the first highlighted block). */
export async function loadedGrammars(): Promise<string[]> {
  const shiki = await import('./shiki-loader');
  return shiki.loadedLanguages();
}

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
