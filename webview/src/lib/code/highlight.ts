/**
 * Highlighting a code block: the fence's language to a grammar, the theme from VS Code's body
 * class (./theme-watch.ts; re-highlighted when it changes), and the tokens from shiki — whose module, grammars and
 * themes are separate chunks loaded the first time a block needs them (./shiki-loader.ts), so the
 * webview's first load does not carry them. The schedule and thresholds are in ./languages.ts.
 */
import { grammarFor, type HighlightedLine, type ThemeKind } from './languages';
import { nextFrameSlot } from '../frame-slots';

export * from './languages';

/**
 * Blocks take turns, one tokenization per frame (../frame-slots.ts): when shiki (or a grammar)
 * arrives, every block on screen is waiting for it, and tokenizing them all in one task would hold
 * the frame for as long as all of them take (a long thread opening on a page of code). A grammar's
 * first load (its module's evaluation builds hundreds of regexes) takes a frame of its own.
 */
let turn: Promise<unknown> = Promise.resolve();

/** Tokens of `code` (lines of coloured tokens), or null when its language has no grammar here. */
export async function highlightCode(code: string, lang: string, theme: ThemeKind): Promise<HighlightedLine[] | null> {
  const id = grammarFor(lang);
  if (!id) return null;
  const shiki = await import('./shiki-loader');
  const mine = turn
    .then(nextFrameSlot)
    .then(() => (shiki.isLoaded(id, theme) ? undefined : shiki.load(id, theme).then(nextFrameSlot)))
    .then(() => shiki.tokenize(code, id, theme));
  turn = mine.catch(() => undefined);
  return mine;
}

/** The grammars loaded so far (none before the first highlighted block). */
export async function loadedGrammars(): Promise<string[]> {
  const shiki = await import('./shiki-loader');
  return shiki.loadedLanguages();
}
