/**
 * Which rules a prompt gets (SPEC 6.1), pure: the `@name` / `@rule:name` tokens of manual rules
 * are found (at the start, at the end, before punctuation — never inside a word, an e-mail
 * address or a code span) and stripped from the prompt; the always rules, the rules whose `paths`
 * match a file in the turn's context, and the invoked manual ones are merged without duplicates
 * into one `<user_rules>` block. A `@word` that is neither a rule nor a known mention is a warning.
 */
import { RESERVED_RULE_NAMES } from '../../protocol/commands/rules';
import { matchesAny } from './glob';

export interface AttachableRule { name: string; attach: 'always' | 'manual'; paths: readonly string[]; body: string; enabled: boolean }

/** Characters that may follow a token before the next space (a sentence's punctuation). */
const TRAILING = `.,;:!?)\\]}"'`;
/**
 * A token: `@` after the start, whitespace or an opening bracket or quote; `rule:` optionally; a
 * name; then only trailing punctuation up to whitespace or the end (so `@src/a.ts`, `@a.b` and
 * `x@y.z` are not tokens).
 */
const TOKEN = new RegExp(`(^|[\\s(\\[{"'])@(rule:)?([A-Za-z0-9_-]+)(?=[${TRAILING}]*(?:\\s|$))`, 'g');

/** The ranges of code spans and fenced blocks, where nothing is a token. */
function codeRanges(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const fence = /(^|\n)(```|~~~)[^\n]*\n[\s\S]*?(?:\n\2[^\n]*(?=\n|$)|$)/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) out.push([m.index, m.index + m[0].length]);
  const inFence = (i: number) => out.some(([a, b]) => i >= a && i < b);
  const span = /(`+)[^`]*?\1/g;
  const spans: Array<[number, number]> = [];
  for (let m = span.exec(text); m; m = span.exec(text)) if (!inFence(m.index)) spans.push([m.index, m.index + m[0].length]);
  return [...out, ...spans];
}

export interface Token { start: number; end: number; name: string; explicit: boolean }

/** Every `@name` / `@rule:name` token outside code. `start..end` covers the `@` to the name's end. */
export function findTokens(text: string): Token[] {
  const code = codeRanges(text);
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    const start = m.index + m[1]!.length;
    if (code.some(([a, b]) => start >= a && start < b)) continue;
    out.push({ start, end: m.index + m[0].length, name: m[3]!, explicit: m[2] !== undefined });
  }
  return out;
}

export interface Extraction {
  /** The prompt without the manual rules' tokens (unchanged when stripping would leave nothing). */
  prompt: string;
  /** Rules attached, in order: always, then paths-matched, then invoked manual ones; no duplicates. */
  rules: AttachableRule[];
  /** One line per `@word` that is neither a rule nor a known mention. */
  warnings: string[];
}

export interface ExtractInput {
  prompt: string;
  rules: readonly AttachableRule[];
  /** Workspace-relative paths in the turn's context (@file / @folder mentions). */
  contextPaths?: readonly string[];
  /** Whether `@word` names something the mention resolver knows (a file, a folder, a mention's label). */
  isKnownMention?: (word: string) => boolean;
}

export function extractRules(input: ExtractInput): Extraction {
  const enabled = input.rules.filter((r) => r.enabled);
  // Names match case-insensitively (`@Style` invokes `style`), as people type them.
  const byName = new Map(enabled.map((r) => [r.name.toLowerCase(), r]));
  const allNames = new Set(input.rules.map((r) => r.name.toLowerCase()));
  const attached: AttachableRule[] = [];
  const add = (r: AttachableRule) => {
    if (!attached.includes(r)) attached.push(r);
  };
  for (const r of enabled) if (r.attach === 'always') add(r);
  const paths = input.contextPaths ?? [];
  for (const r of enabled) if (r.paths.length > 0 && paths.some((p) => matchesAny(r.paths, p))) add(r);
  const strip: Token[] = [];
  const warnings: string[] = [];
  for (const t of findTokens(input.prompt)) {
    const rule = byName.get(t.name.toLowerCase());
    if (rule && (rule.attach === 'manual' || t.explicit)) {
      add(rule);
      strip.push(t);
      continue;
    }
    if (rule) continue; // an always rule named by @name: already attached, and the word may be meant
    if (t.explicit) {
      warnings.push(allNames.has(t.name.toLowerCase()) ? `@rule:${t.name}: that rule is disabled` : `@rule:${t.name}: there is no rule of that name`);
      continue;
    }
    if (RESERVED_RULE_NAMES.includes(t.name.toLowerCase()) || input.isKnownMention?.(t.name)) continue;
    warnings.push(allNames.has(t.name.toLowerCase()) ? `@${t.name}: that rule is disabled` : `@${t.name} is neither a rule nor a known mention`);
  }
  let prompt = input.prompt;
  for (const t of [...strip].reverse()) {
    // The token and one space beside it go, so "see @a, then" becomes "see, then" and "@a fix" becomes "fix".
    let a = t.start;
    let b = t.end;
    if (prompt[b] === ' ') b++;
    else if (a > 0 && prompt[a - 1] === ' ' && (b === prompt.length || /[\s.,;:!?)\]}"']/.test(prompt[b]!))) a--;
    prompt = prompt.slice(0, a) + prompt.slice(b);
  }
  prompt = prompt.trim();
  return { prompt: prompt.length > 0 ? prompt : input.prompt, rules: attached, warnings };
}

function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The one block appended to the turn ('' for no rules). */
export function formatRulesBlock(rules: ReadonlyArray<{ name: string; body: string }>): string {
  if (rules.length === 0) return '';
  const inner = rules.map((r) => `<rule name="${attr(r.name)}">\n${r.body}\n</rule>`).join('\n');
  return `<user_rules>\nThe user's rules for this request; follow them.\n${inner}\n</user_rules>`;
}
