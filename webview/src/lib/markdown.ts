/**
 * Model output → safe HTML. Markdown is parsed with marked; top-level fenced/indented code blocks
 * are returned as separate parts (rendered by CodeBlock.svelte, as text, never as HTML), and every
 * other run of tokens is rendered to HTML and sanitised by DOMPurify before it reaches `{@html}`.
 * Model output is untrusted: `<script>`, event-handler attributes (`onerror=`), `javascript:` URLs,
 * forms, frames and inline styles are removed. Links get `rel="noopener noreferrer"`.
 */
import { Marked, type Token } from 'marked';
import DOMPurify from 'dompurify';

export type MarkdownPart = { kind: 'html'; html: string } | { kind: 'code'; lang: string; text: string };

const marked = new Marked({ gfm: true, breaks: false, async: false });

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

function renderTokens(tokens: Token[]): string {
  return sanitizeHtml(marked.parser(tokens));
}

/** Splits markdown into sanitised HTML parts and code blocks, in order. */
export function markdownParts(src: string): MarkdownPart[] {
  let tokens: Token[];
  try {
    tokens = marked.lexer(src);
  } catch (e) {
    console.warn('[vox] markdown failed to parse; showing it as text', e);
    return [{ kind: 'html', html: `<p>${escapeHtml(src)}</p>` }];
  }
  const parts: MarkdownPart[] = [];
  let group: Token[] = [];
  const flush = (): void => {
    if (group.length === 0) return;
    try {
      parts.push({ kind: 'html', html: renderTokens(group) });
    } catch (e) {
      console.warn('[vox] markdown failed to render; showing it as text', e);
      parts.push({ kind: 'html', html: `<p>${escapeHtml(group.map((t) => t.raw).join(''))}</p>` });
    }
    group = [];
  };
  for (const t of tokens) {
    if (t.type === 'code') {
      flush();
      const lang = typeof t.lang === 'string' ? (t.lang.split(/\s+/)[0] ?? '') : '';
      parts.push({ kind: 'code', lang, text: String(t.text ?? '') });
    } else {
      group.push(t);
    }
  }
  flush();
  return parts;
}
