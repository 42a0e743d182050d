/**
 * A small syntax highlighter for code blocks: comments, strings, numbers and keywords for three
 * language families (C-like, hash-comment, JSON). It returns tokens, not HTML — CodeBlock.svelte
 * renders them as text, so nothing here can inject markup. Limits (SPEC §5.4): no highlighting
 * over HIGHLIGHT_MAX_CHARS, and highlighting deferred by HIGHLIGHT_DEFER_MS over
 * HIGHLIGHT_DEFER_OVER_CHARS (the caller schedules it).
 */

/** Code longer than this is shown plain (highlighting would cost more than it helps). */
export const HIGHLIGHT_MAX_CHARS = 20_000;
/** Code longer than this is shown plain first and highlighted after HIGHLIGHT_DEFER_MS. */
export const HIGHLIGHT_DEFER_OVER_CHARS = 2_000;
export const HIGHLIGHT_DEFER_MS = 300;

export type TokenClass = 'kw' | 'str' | 'com' | 'num' | 'lit' | '';
export interface CodeToken { cls: TokenClass; text: string }

interface Family { pattern: RegExp; keywords: ReadonlySet<string>; literals: ReadonlySet<string> }

const STRING = String.raw`"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?`;
const NUMBER = String.raw`\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b`;
const WORD = String.raw`[A-Za-z_$][\w$]*`;

const words = (s: string): ReadonlySet<string> => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE: Family = {
  pattern: new RegExp(String.raw`(//[^\n]*|/\*[\s\S]*?(?:\*/|$))|(${STRING}|\x60(?:[^\x60\\]|\\[\s\S])*\x60?)|(${NUMBER})|(${WORD})`, 'g'),
  keywords: words(`
    abstract as async await break case catch class const continue default defer delete do else enum export extends
    final finally fn for func function go if impl implements import in instanceof interface let loop match mod module
    mut namespace new package private protected pub public return static struct super switch this throw throws trait
    try type typeof use var void while with yield readonly declare keyof satisfies override where dyn ref unsafe
    int long short char float double bool boolean string byte unsigned signed auto sizeof template typename using`),
  literals: words('true false null undefined nil None Some Ok Err self NaN Infinity'),
};

const HASH: Family = {
  pattern: new RegExp(String.raw`(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|${STRING})|(${NUMBER})|(${WORD})`, 'g'),
  keywords: words(`
    and as assert async await break class continue def del elif else except finally for from global if import in is
    lambda nonlocal not or pass raise return try while with yield then fi do done esac case function local export
    echo exit set unset source alias begin end module require include unless until when elsif ensure rescue`),
  literals: words('True False None true false nil null yes no'),
};

const JSON_FAMILY: Family = {
  pattern: new RegExp(String.raw`(\/\/[^\n]*)|(${STRING})|(-?${NUMBER})|(${WORD})`, 'g'),
  keywords: words(''),
  literals: words('true false null'),
};

const FAMILY_BY_LANG: Record<string, Family> = {};
for (const l of 'js javascript jsx mjs cjs ts typescript tsx java c h cpp cc cxx hpp c++ cs csharp go golang rust rs swift kotlin kt scala php dart zig'.split(' ')) FAMILY_BY_LANG[l] = C_LIKE;
for (const l of 'py python sh bash shell zsh console yaml yml toml rb ruby perl pl r ini dockerfile make makefile cmake ps1 powershell'.split(' ')) FAMILY_BY_LANG[l] = HASH;
for (const l of 'json jsonc json5'.split(' ')) FAMILY_BY_LANG[l] = JSON_FAMILY;

/** Whether `lang` is highlighted at all (unknown languages are shown plain). */
export function canHighlight(lang: string): boolean {
  return Object.prototype.hasOwnProperty.call(FAMILY_BY_LANG, lang.toLowerCase());
}

/** Tokens for `code`; plain (one token) when the language is unknown or the code too long. */
export function highlight(code: string, lang: string): CodeToken[] {
  const family = canHighlight(lang) ? FAMILY_BY_LANG[lang.toLowerCase()] : undefined;
  if (!family || code.length > HIGHLIGHT_MAX_CHARS) return [{ cls: '', text: code }];
  const out: CodeToken[] = [];
  const push = (cls: TokenClass, text: string): void => {
    if (text.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.cls === cls) last.text += text;
    else out.push({ cls, text });
  };
  const re = new RegExp(family.pattern.source, 'g');
  let at = 0;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    push('', code.slice(at, m.index));
    if (m[1] !== undefined) push('com', m[0]);
    else if (m[2] !== undefined) push('str', m[0]);
    else if (m[3] !== undefined) push('num', m[0]);
    else if (family.keywords.has(m[0])) push('kw', m[0]);
    else if (family.literals.has(m[0])) push('lit', m[0]);
    else push('', m[0]);
    at = m.index + m[0].length;
  }
  push('', code.slice(at));
  return out;
}
