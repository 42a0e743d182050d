/**
 * Highlighting a code block: the fence's language to a grammar, the theme from VS Code's body
 * class (./theme-watch.ts; re-highlighted when it changes), and the tokens from shiki — whose module, grammars and
 * themes are separate chunks loaded the first time a block needs them (./shiki-loader.ts), so the
 * webview's first load does not carry them. The schedule and thresholds are in ./languages.ts.
 */
import { grammarFor, type HighlightedLine, type ThemeKind } from './languages';

export * from './languages';

/**
 * Blocks take turns, one tokenization per frame: when shiki (or a grammar) arrives, every block on
 * screen is waiting for it, and tokenizing them all in the microtasks of one task would hold the
 * frame for as long as all of them take (a long thread opening on a page of code). One per task
 * is not enough: Chromium runs queued tasks before a due frame until its starvation guard
 * (~100 ms) lets the frame in, so each turn waits for a frame first (or FRAME_WAIT_MAX_MS, so a
 * hidden webview, which draws no frames, still gets its highlighting; outside a page — the
 * unit tests — there are no frames to wait for).
 */
const FRAME_WAIT_MAX_MS = 100;
let turn: Promise<unknown> = Promise.resolve();
const nextTask = (): Promise<void> =>
  new Promise((resolve) => {
    let done = false;
    const go = (): void => {
      if (done) return;
      done = true;
      setTimeout(resolve, 0);
    };
    const raf = (globalThis as { requestAnimationFrame?: (cb: () => void) => number }).requestAnimationFrame;
    if (typeof raf === 'function') raf.call(globalThis, go);
    setTimeout(go, FRAME_WAIT_MAX_MS);
  });

/** Tokens of `code` (lines of coloured tokens), or null when its language has no grammar here. */
export async function highlightCode(code: string, lang: string, theme: ThemeKind): Promise<HighlightedLine[] | null> {
  const id = grammarFor(lang);
  if (!id) return null;
  const shiki = await import('./shiki-loader');
  const mine = turn.then(nextTask).then(() => shiki.tokenize(code, id, theme));
  turn = mine.catch(() => undefined);
  return mine;
}

/** The grammars loaded so far (none before the first highlighted block). */
export async function loadedGrammars(): Promise<string[]> {
  const shiki = await import('./shiki-loader');
  return shiki.loadedLanguages();
}
