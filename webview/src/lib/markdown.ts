/**
 * Model output → safe HTML. Markdown is parsed with marked; top-level fenced/indented code blocks
 * are returned as separate parts (rendered by CodeBlock.svelte, as text, never as HTML), and every
 * other top-level block is rendered to HTML and sanitised by DOMPurify before it reaches
 * `{@html}`. One part per block, cached by its source: while a message streams, only its last
 * block changes, so only that block is re-rendered (and the DOM of the others stays put).
 * Model output is untrusted: `<script>`, event-handler attributes (`onerror=`), `javascript:` URLs,
 * forms, frames and inline styles are removed. Links get `rel="noopener noreferrer"`.
 */
import { Marked, type Token } from 'marked';
import DOMPurify from 'dompurify';

/** A code part's `info` is the whole fence info string (```ts src/app.ts: the language, then a path). */
export type MarkdownPart = { kind: 'html'; html: string } | { kind: 'code'; lang: string; info: string; text: string };

const marked = new Marked({ gfm: true, breaks: false, async: false });

/** Rendered blocks remembered (oldest dropped first). */
const BLOCK_CACHE_ENTRIES = 1_000;
const blockCache = new Map<string, string>();

/** Elements never allowed, even where DOMPurify's HTML profile would keep them. */
const FORBID_TAGS = ['style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'iframe', 'frame', 'object', 'embed', 'link', 'meta', 'base', 'svg', 'math'];
/** Inline styles would violate the webview's CSP and can hide or spoof UI. */
const FORBID_ATTR = ['style', 'srcset', 'formaction'];

let hooked = false;
function purifier(): typeof DOMPurify {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') node.setAttribute('rel', 'noopener noreferrer');
    });
  }
  return DOMPurify;
}

export function sanitizeHtml(html: string): string {
  return purifier().sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS, FORBID_ATTR, ALLOW_DATA_ATTR: false });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function renderBlock(token: Token, links: object): string {
  const key = Object.keys(links).length === 0 ? token.raw : `${token.raw}\u0000${JSON.stringify(links)}`;
  const hit = blockCache.get(key);
  if (hit !== undefined) return hit;
  let html: string;
  try {
    html = sanitizeHtml(marked.parser([token]));
  } catch (e) {
    console.warn('[vox] markdown failed to render; showing it as text', e);
    html = `<p>${escapeHtml(token.raw)}</p>`;
  }
  blockCache.set(key, html);
  if (blockCache.size > BLOCK_CACHE_ENTRIES) {
    const oldest = blockCache.keys().next().value;
    if (oldest !== undefined) blockCache.delete(oldest);
  }
  return html;
}

/** Splits markdown into sanitised HTML blocks and code blocks, in order. */
export function markdownParts(src: string): MarkdownPart[] {
  let tokens: ReturnType<typeof marked.lexer>;
  try {
    tokens = marked.lexer(src);
  } catch (e) {
    console.warn('[vox] markdown failed to parse; showing it as text', e);
    return [{ kind: 'html', html: `<p>${escapeHtml(src)}</p>` }];
  }
  const parts: MarkdownPart[] = [];
  for (const t of tokens) {
    if (t.type === 'space') continue;
    if (t.type === 'code') {
      const info = typeof t.lang === 'string' ? t.lang.trim() : '';
      const lang = info.split(/\s+/)[0] ?? '';
      parts.push({ kind: 'code', lang, info, text: String(t.text ?? '') });
    } else {
      parts.push({ kind: 'html', html: renderBlock(t, tokens.links) });
    }
  }
  return parts;
}
