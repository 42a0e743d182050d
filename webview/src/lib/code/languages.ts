/**
 * What a code block's fence says, and when to highlight it: the fence's language (with the
 * usual aliases) to a shiki grammar id, the theme kind from VS Code's body class, the path a block
 * names (```lang path/to/file, or a "path:" comment on its first line), and the highlighting
 * schedule with the SPEC §5.4 thresholds. Pure: no DOM, no shiki (../code/highlight.ts loads it).
 */

/** Code longer than this is shown plain (highlighting would cost more than it helps; SPEC §5.4). */
export const HIGHLIGHT_MAX_CHARS = 20_000;
/** Code longer than this is shown plain first and highlighted after HIGHLIGHT_DEFER_MS (SPEC §5.4). */
export const HIGHLIGHT_DEFER_OVER_CHARS = 2_000;
export const HIGHLIGHT_DEFER_MS = 300;
/**
 * While a block streams (its code keeps growing), it is highlighted again at most this often;
 * in between, the tokens of the last pass cover the text they had and the rest shows plain, so
 * the text never moves (same characters, same monospace font) — only colours catch up.
 */
export const STREAMING_HIGHLIGHT_INTERVAL_MS = 400;

export type ThemeKind = 'dark' | 'light' | 'hcDark' | 'hcLight';

export interface HighlightedToken {
  text: string;
  color?: string;
  /** shiki's FontStyle bits: 1 italic, 2 bold, 4 underline. */
  fontStyle?: number;
}
export type HighlightedLine = HighlightedToken[];

/**
 * The grammars Vox can load (shiki ids; ./shiki-loader.ts has one lazy import per id). Curated:
 * each grammar is a chunk (plus shared ones for embedded grammars) and the VSIX must stay under
 * vsce's 100-JavaScript-files warning (test/packaging/vsix.test.ts); other fences show plain.
 */
export const GRAMMAR_IDS = [
  'bat', 'c', 'cmake', 'cpp', 'csharp', 'css', 'dart', 'diff', 'docker', 'elixir', 'go',
  'graphql', 'haskell', 'hcl', 'html', 'ini', 'java', 'javascript', 'json', 'jsonc', 'jsx', 'kotlin',
  'less', 'lua', 'make', 'markdown', 'objective-c', 'perl', 'php', 'powershell', 'proto', 'python', 'r',
  'ruby', 'rust', 'scala', 'scss', 'shellscript', 'shellsession', 'sql', 'svelte', 'swift', 'terraform', 'toml', 'tsx',
  'typescript', 'vue', 'xml', 'yaml', 'zig',
] as const;
export type GrammarId = (typeof GRAMMAR_IDS)[number];

/** Fence names to grammar ids where they differ (the ids themselves are accepted as they are). */
const ALIASES: Record<string, string> = {
  ts: 'typescript', mts: 'typescript', cts: 'typescript', js: 'javascript', mjs: 'javascript', cjs: 'javascript', node: 'javascript',
  py: 'python', python3: 'python', sh: 'shellscript', bash: 'shellscript', zsh: 'shellscript', shell: 'shellscript', ksh: 'shellscript',
  console: 'shellsession', 'shell-session': 'shellsession', ps1: 'powershell', pwsh: 'powershell', ps: 'powershell',
  yml: 'yaml', md: 'markdown', rs: 'rust', golang: 'go', kt: 'kotlin', kts: 'kotlin', h: 'c', 'c++': 'cpp', cc: 'cpp', cxx: 'cpp',
  hpp: 'cpp', hh: 'cpp', cs: 'csharp', 'c#': 'csharp', rb: 'ruby', objc: 'objective-c', 'objective-c++': 'objective-c',
  dockerfile: 'docker', makefile: 'make', mk: 'make', tf: 'terraform', tfvars: 'terraform', protobuf: 'proto', cmd: 'bat', batch: 'bat',
  ex: 'elixir', exs: 'elixir', hs: 'haskell',
  gql: 'graphql', patch: 'diff', svg: 'xml', xsd: 'xml', plist: 'xml', htm: 'html', xhtml: 'html',
  json5: 'jsonc', jsonl: 'json', conf: 'ini', properties: 'ini', scala3: 'scala', pl: 'perl',
};

/** The grammar id for a fence's language, or null (unknown: shown plain). */
export function grammarFor(lang: string): GrammarId | null {
  const l = lang.trim().toLowerCase();
  if (l.length === 0) return null;
  const id = ALIASES[l] ?? l;
  return (GRAMMAR_IDS as readonly string[]).includes(id) ? (id as GrammarId) : null;
}

/** The theme of VS Code's body classes (`vscode-dark`, `vscode-light`, `vscode-high-contrast`, `vscode-high-contrast-light`). */
export function themeKindOf(classes: { contains(c: string): boolean }): ThemeKind {
  if (classes.contains('vscode-high-contrast-light')) return 'hcLight';
  if (classes.contains('vscode-high-contrast')) return 'hcDark';
  if (classes.contains('vscode-light')) return 'light';
  return 'dark';
}

/** What to do about a block's code now: show it plain for good, highlight it now, or after `ms`. */
export type HighlightPlan = { kind: 'plain' } | { kind: 'now' } | { kind: 'after'; ms: number };

/**
 * The schedule: none over HIGHLIGHT_MAX_CHARS; the first pass now (or after HIGHLIGHT_DEFER_MS over
 * HIGHLIGHT_DEFER_OVER_CHARS); while the code grows, a pass at most every STREAMING_HIGHLIGHT_INTERVAL_MS
 * after the last (`lastPassAt`, on the same clock as `now`).
 */
export function planHighlight(codeLength: number, lastPassAt: number | null, now: number): HighlightPlan {
  if (codeLength > HIGHLIGHT_MAX_CHARS) return { kind: 'plain' };
  if (lastPassAt === null) return codeLength > HIGHLIGHT_DEFER_OVER_CHARS ? { kind: 'after', ms: HIGHLIGHT_DEFER_MS } : { kind: 'now' };
  const wait = lastPassAt + STREAMING_HIGHLIGHT_INTERVAL_MS - now;
  return wait > 0 ? { kind: 'after', ms: wait } : { kind: 'now' };
}

/** Longest path a block may name (anything longer is not a path). */
const MAX_NAMED_PATH_CHARS = 260;
const PATH_LIKE = /^(?!.*\s)[\w@.~+\-/\\]+\.?[\w-]*$/;

function asPath(s: string): string | null {
  const p = s.trim().replace(/^["'`]|["'`]$/g, '');
  return p.length > 0 && p.length <= MAX_NAMED_PATH_CHARS && PATH_LIKE.test(p) && /[./\\]/.test(p) ? p : null;
}

/**
 * The file a block names: the fence info after the language (```ts src/app.ts, or path=…/file=…),
 * else a first-line comment `// path: src/app.ts` (or #, --, <!-- -->, /* *\/ comments; `file:` too).
 */
export function namedPath(info: string, code: string): string | null {
  const words = info.trim().split(/\s+/).slice(1);
  for (const w of words) {
    const kv = /^(?:path|file|filename|title)=(.+)$/i.exec(w);
    const p = asPath(kv ? kv[1]! : w);
    if (p) return p;
  }
  const first = code.split('\n', 1)[0] ?? '';
  const m = /^\s*(?:\/\/|#|--|;|<!--|\/\*)\s*(?:path|file|filename)\s*:\s*(.+?)\s*(?:-->|\*\/)?\s*$/i.exec(first);
  return m ? asPath(m[1]!) : null;
}
