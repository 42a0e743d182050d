/**
 * The DOM/page snapshot rule of SPEC 5.2: a tool result carrying a DOM or page snapshot over
 * DOM_SNAPSHOT_LIMIT_BYTES (UTF-8) drops the inline DOM and says to narrow the selector instead.
 * Vox's tools return what threads hold (their messages may carry a browser tool's page dump).
 *
 * A snapshot is recognised as: a string under a key named like one (DOM_SNAPSHOT_KEYS, any case),
 * or any string that starts (after white space) with `<!DOCTYPE html` or `<html`, or an MCP
 * content part whose mimeType is text/html. Pure functions: no I/O.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Largest inline DOM/page snapshot a tool result may carry (UTF-8 bytes). */
export const DOM_SNAPSHOT_LIMIT_BYTES = 20 * 1024;
/** Keys whose string value is a DOM/page snapshot, whatever it starts with (compared lower-case). */
export const DOM_SNAPSHOT_KEYS: ReadonlySet<string> = new Set(['dom', 'snapshot', 'domsnapshot', 'pagesnapshot', 'html', 'pagehtml']);
/** Deepest nesting walked (a result deeper than this is left as it is below that depth). */
export const DOM_WALK_MAX_DEPTH = 64;

export function looksLikeDom(s: string): boolean {
  const head = s.slice(0, 256).trimStart().slice(0, 16).toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html');
}

export function isDomSnapshot(key: string | null, s: string): boolean {
  return (key !== null && DOM_SNAPSHOT_KEYS.has(key.toLowerCase())) || looksLikeDom(s);
}

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export function domSnapshotHint(bytes: number): string {
  return `[DOM snapshot dropped: ${bytes} bytes is over the ${DOM_SNAPSHOT_LIMIT_BYTES}-byte limit (20 KiB). Narrow the selector to the element you need (a CSS selector, an element ref or a smaller region) and ask again.]`;
}

/** The string as it may travel: itself, or the hint when it is an oversized snapshot. */
export function limitDomString(key: string | null, s: string): { text: string; dropped: boolean } {
  if (!isDomSnapshot(key, s)) return { text: s, dropped: false };
  const bytes = utf8Bytes(s);
  return bytes > DOM_SNAPSHOT_LIMIT_BYTES ? { text: domSnapshotHint(bytes), dropped: true } : { text: s, dropped: false };
}

/** A copy of a JSON value with every oversized snapshot replaced by the hint, and how many were dropped. */
export function dropDomSnapshots<T>(value: T): { value: T; dropped: number } {
  let dropped = 0;
  const walk = (v: unknown, key: string | null, depth: number): unknown => {
    if (typeof v === 'string') {
      const r = limitDomString(key, v);
      if (r.dropped) dropped++;
      return r.text;
    }
    if (depth >= DOM_WALK_MAX_DEPTH || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, key, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, k, depth + 1);
    return out;
  };
  const out = walk(value, null, 0) as T;
  return { value: out, dropped };
}

/** The rule applied to a whole MCP tool result: text parts, text/html resources, structured content. */
export function applyDomSnapshotRule(result: CallToolResult): CallToolResult {
  const content = result.content.map((part) => {
    if (part.type === 'text') {
      const r = limitDomString(null, part.text);
      return r.dropped ? { ...part, text: r.text } : part;
    }
    if (part.type === 'resource' && 'text' in part.resource && typeof part.resource.text === 'string') {
      const html = part.resource.mimeType?.toLowerCase().startsWith('text/html') === true;
      const r = limitDomString(html ? 'html' : null, part.resource.text);
      return r.dropped ? { type: 'text' as const, text: r.text } : part;
    }
    return part;
  });
  const structured = result.structuredContent ? dropDomSnapshots(result.structuredContent).value : undefined;
  return { ...result, content, ...(structured ? { structuredContent: structured } : {}) };
}
