/**
 * The shiki highlighter of code blocks, loaded lazily (the first highlighted block imports this
 * module, a chunk of its own). VS Code's TextMate grammars and themes, matched by shiki's
 * JavaScript raw engine over the precompiled grammars (@shikijs/langs-precompiled: the Oniguruma
 * patterns already translated to JavaScript regexes, so a grammar's first use costs no
 * translation — about 150 ms in one task otherwise; no WASM, no eval: the CSP stays strict). Each language is
 * its own chunk, imported the first time a block uses it; themes likewise. `loadedLanguages`
 * says what has been loaded (the tests check that only the languages a message uses are).
 */
import { createHighlighterCore, type HighlighterCore, type LanguageRegistration, type ThemeRegistration } from 'shiki/core';
import { createJavaScriptRawEngine } from 'shiki/engine/javascript';
import type { GrammarId, HighlightedLine, ThemeKind } from './languages';

type Loader<T> = () => Promise<{ default: T }>;

/**
 * The grammars Vox loads on demand (shiki ids). Each `import()` is a separate chunk: esbuild
 * splits it out of the webview bundle, and nothing is fetched until a block needs it.
 */
const GRAMMARS: Record<GrammarId, Loader<LanguageRegistration[]>> = {
  bat: () => import('@shikijs/langs-precompiled/bat'),
  c: () => import('@shikijs/langs-precompiled/c'),
  cmake: () => import('@shikijs/langs-precompiled/cmake'),
  cpp: () => import('@shikijs/langs-precompiled/cpp'),
  csharp: () => import('@shikijs/langs-precompiled/csharp'),
  css: () => import('@shikijs/langs-precompiled/css'),
  dart: () => import('@shikijs/langs-precompiled/dart'),
  diff: () => import('@shikijs/langs-precompiled/diff'),
  docker: () => import('@shikijs/langs-precompiled/docker'),
  elixir: () => import('@shikijs/langs-precompiled/elixir'),
  go: () => import('@shikijs/langs-precompiled/go'),
  graphql: () => import('@shikijs/langs-precompiled/graphql'),
  haskell: () => import('@shikijs/langs-precompiled/haskell'),
  hcl: () => import('@shikijs/langs-precompiled/hcl'),
  html: () => import('@shikijs/langs-precompiled/html'),
  ini: () => import('@shikijs/langs-precompiled/ini'),
  java: () => import('@shikijs/langs-precompiled/java'),
  javascript: () => import('@shikijs/langs-precompiled/javascript'),
  json: () => import('@shikijs/langs-precompiled/json'),
  jsonc: () => import('@shikijs/langs-precompiled/jsonc'),
  jsx: () => import('@shikijs/langs-precompiled/jsx'),
  kotlin: () => import('@shikijs/langs-precompiled/kotlin'),
  less: () => import('@shikijs/langs-precompiled/less'),
  lua: () => import('@shikijs/langs-precompiled/lua'),
  make: () => import('@shikijs/langs-precompiled/make'),
  markdown: () => import('@shikijs/langs-precompiled/markdown'),
  'objective-c': () => import('@shikijs/langs-precompiled/objective-c'),
  perl: () => import('@shikijs/langs-precompiled/perl'),
  php: () => import('@shikijs/langs-precompiled/php'),
  powershell: () => import('@shikijs/langs-precompiled/powershell'),
  proto: () => import('@shikijs/langs-precompiled/proto'),
  python: () => import('@shikijs/langs-precompiled/python'),
  r: () => import('@shikijs/langs-precompiled/r'),
  ruby: () => import('@shikijs/langs-precompiled/ruby'),
  rust: () => import('@shikijs/langs-precompiled/rust'),
  scala: () => import('@shikijs/langs-precompiled/scala'),
  scss: () => import('@shikijs/langs-precompiled/scss'),
  shellscript: () => import('@shikijs/langs-precompiled/shellscript'),
  shellsession: () => import('@shikijs/langs-precompiled/shellsession'),
  sql: () => import('@shikijs/langs-precompiled/sql'),
  svelte: () => import('@shikijs/langs-precompiled/svelte'),
  swift: () => import('@shikijs/langs-precompiled/swift'),
  terraform: () => import('@shikijs/langs-precompiled/terraform'),
  toml: () => import('@shikijs/langs-precompiled/toml'),
  tsx: () => import('@shikijs/langs-precompiled/tsx'),
  typescript: () => import('@shikijs/langs-precompiled/typescript'),
  vue: () => import('@shikijs/langs-precompiled/vue'),
  xml: () => import('@shikijs/langs-precompiled/xml'),
  yaml: () => import('@shikijs/langs-precompiled/yaml'),
  zig: () => import('@shikijs/langs-precompiled/zig'),
};

/**
 * VS Code's own Default Dark+ / Light+ themes; for high contrast (which shiki does not ship from
 * VS Code) GitHub's high-contrast themes, the closest kept ones.
 */
const THEMES: Record<ThemeKind, [name: string, load: Loader<ThemeRegistration>]> = {
  dark: ['dark-plus', () => import('@shikijs/themes/dark-plus')],
  light: ['light-plus', () => import('@shikijs/themes/light-plus')],
  hcDark: ['github-dark-high-contrast', () => import('@shikijs/themes/github-dark-high-contrast')],
  hcLight: ['github-light-high-contrast', () => import('@shikijs/themes/github-light-high-contrast')],
};

let highlighter: Promise<HighlighterCore> | null = null;
const languages = new Map<string, Promise<void>>();
const themes = new Map<ThemeKind, Promise<void>>();

function core(): Promise<HighlighterCore> {
  highlighter ??= createHighlighterCore({ themes: [], langs: [], engine: createJavaScriptRawEngine() });
  return highlighter;
}

function loadLanguage(h: HighlighterCore, id: GrammarId): Promise<void> {
  let p = languages.get(id);
  if (!p) {
    p = GRAMMARS[id]().then((m) => h.loadLanguage(m.default));
    p.catch(() => languages.delete(id)); // a failed fetch may be retried by the next block
    languages.set(id, p);
  }
  return p;
}

function loadTheme(h: HighlighterCore, kind: ThemeKind): Promise<void> {
  let p = themes.get(kind);
  if (!p) {
    p = THEMES[kind][1]().then((m) => h.loadTheme(m.default));
    p.catch(() => themes.delete(kind));
    themes.set(kind, p);
  }
  return p;
}

/** What `load` finished loading (`lang:<id>`, `theme:<kind>`). */
const loadedNow = new Set<string>();

/** The shiki ids of the grammars loaded so far (each with the grammars it embeds). */
export async function loadedLanguages(): Promise<string[]> {
  if (!highlighter) return [];
  return (await highlighter).getLoadedLanguages().map(String).sort();
}

/**
 * Time one line may take to tokenize before the rest of it stays plain. shiki's default (500 ms)
 * cut lines short when a grammar's first use — converting its patterns to JavaScript regexes —
 * ran on a busy machine, leaving a block half coloured; a pathological line is still bounded.
 */
export const TOKENIZE_LINE_TIME_LIMIT_MS = 3_000;
/** Lines longer than this stay plain (minified code): their cost grows with length, their colours help little. */
export const TOKENIZE_MAX_LINE_CHARS = 4_000;

/** Tokens of `code` in grammar `id` with theme `kind`: lines of {text, color, fontStyle}. */
/** Whether the highlighter, grammar `id` and theme `kind` are all loaded (a tokenization then loads nothing). */
export function isLoaded(id: GrammarId, kind: ThemeKind): boolean {
  return loadedNow.has(`lang:${id}`) && loadedNow.has(`theme:${kind}`);
}

/** Loads the highlighter, grammar `id` and theme `kind` (each once). */
export async function load(id: GrammarId, kind: ThemeKind): Promise<void> {
  const h = await core();
  await Promise.all([loadLanguage(h, id), loadTheme(h, kind)]);
  loadedNow.add(`lang:${id}`);
  loadedNow.add(`theme:${kind}`);
}

export async function tokenize(code: string, id: GrammarId, kind: ThemeKind): Promise<HighlightedLine[]> {
  const h = await core();
  await Promise.all([loadLanguage(h, id), loadTheme(h, kind)]);
  const lines = h.codeToTokensBase(code, { lang: id, theme: THEMES[kind][0], tokenizeTimeLimit: TOKENIZE_LINE_TIME_LIMIT_MS, tokenizeMaxLineLength: TOKENIZE_MAX_LINE_CHARS });
  return lines.map((line) => line.map((t) => ({ text: t.content, ...(t.color ? { color: t.color } : {}), ...(t.fontStyle ? { fontStyle: t.fontStyle } : {}) })));
}
