/**
 * The composer's context: the @-mention popup (what is typed after an `@`, the engine's
 * suggestions, the highlighted row), the accepted mentions as chips (with their size in tokens
 * and warnings, from the engine's estimate), and the context meter (`estimateContext`: tokens of
 * the next request against the model's window). Plain TypeScript like the controller: it mutates
 * `model.context` and sends commands through the function it is given; tests drive it directly.
 *
 * Estimates are asked at most every ESTIMATE_DEBOUNCE_MS while the draft changes, and answers
 * older than the latest request are ignored (the same for suggestions).
 */
import type { ClientCommand, CommandResult } from '../../../src/protocol/commands/index';
import type { ContextChip, Mention, MentionSuggestion } from '../../../src/protocol/mentions';
import { MAX_MENTIONS } from '../../../src/protocol/mentions';
import { isMcpSuggestion, mcpMentionText } from './mcp-mentions';

/** Wait after the last draft change before asking for a new estimate. */
export const ESTIMATE_DEBOUNCE_MS = 300;
/** Suggestions asked for per query. */
export const MENTION_POPUP_ROWS = 12;
/** Share of the window from which the meter shows a warning colour. */
export const METER_WARN_RATIO = 0.8;

export type ContextEstimateView = CommandResult<'estimateContext'>;

export interface ChipView extends Mention {
  label: string;
  /** From the latest estimate (null until it came). */
  tokens: number | null;
  status: ContextChip['status'] | 'pending';
  warning: string | null;
  /** Set when Send was refused because this mention cannot be attached (`refuseUnattached`). */
  blocking?: boolean;
}

export interface ContextModel {
  /** The open popup: the `@` at `start` in the draft and what follows it (null: closed). */
  popup: { start: number; query: string; items: MentionSuggestion[]; selected: number; loading: boolean } | null;
  chips: ChipView[];
  estimate: ContextEstimateView | null;
  /** Set when Send was pressed for a prompt that does not fit: the composer asks to confirm. */
  overflow: { tokens: number; window: number } | null;
  /** The last prompt's rules (SPEC 6.1): the rules the engine attached, and its warnings (`@words` that are neither a rule nor a mention). */
  sentRules?: { rules: string[]; warnings: string[] } | null;
  /** Why the last Send did not go (a mention that cannot be attached); cleared when the chips change. */
  sendError?: string | null;
}

export function createContextModel(): ContextModel {
  return { popup: null, chips: [], estimate: null, overflow: null, sentRules: null, sendError: null };
}

/** The mention being typed at `caret`: an `@` at the start or after whitespace, then no whitespace up to the caret. */
export function mentionQueryAt(text: string, caret: number): { start: number; query: string } | null {
  let i = caret - 1;
  while (i >= 0 && !/\s/.test(text[i]!) && text[i] !== '@') i--;
  if (i < 0 || text[i] !== '@') return null;
  if (i > 0 && !/\s/.test(text[i - 1]!)) return null; // an e-mail address, not a mention
  return { start: i, query: text.slice(i + 1, caret) };
}

/** What the draft shows for an accepted mention. */
export function mentionText(s: MentionSuggestion): string {
  if (isMcpSuggestion(s)) return mcpMentionText(s);
  if (s.kind === 'rule') return `@${s.label}`;
  if (s.kind === 'file' || s.kind === 'folder') return `@${s.label}`;
  if (s.kind === 'git') return `@${s.label}`;
  if (s.kind === 'thread') return `@thread:${s.label.replace(/\s+/g, '-').slice(0, 40)}`;
  return `@${s.kind}`;
}

const sameMention = (a: Mention, b: Mention) => a.kind === b.kind && (a.target ?? null) === (b.target ?? null);

export interface ContextHost {
  send(command: ClientCommand): string;
  threadId(): string | null;
  draft(): string;
  setDraft(text: string): void;
  /** A timer (the app: setTimeout; tests: a manual one). */
  schedule(fn: () => void, ms: number): { cancel(): void };
}

export class ContextController {
  private suggestRequest: string | null = null;
  private estimateRequest: string | null = null;
  private timer: { cancel(): void } | null = null;
  /** Estimates are asked only once a composer shows the meter (`activate`). */
  private active = false;
  private lastSent: ChipView[] = [];

  constructor(readonly model: ContextModel, private readonly host: ContextHost) {}

  /** The composer is on screen: keep the meter current from now on. */
  activate(): void {
    this.active = true;
    this.scheduleEstimate(0);
  }

  /** The draft changed (typing): opens, updates or closes the popup and schedules an estimate. */
  onDraftInput(text: string, caret: number): void {
    const q = mentionQueryAt(text, caret);
    if (q) {
      const changed = !this.model.popup || this.model.popup.query !== q.query || this.model.popup.start !== q.start;
      if (changed) {
        this.model.popup = { start: q.start, query: q.query, items: this.model.popup?.items ?? [], selected: 0, loading: true };
        this.suggestRequest = this.host.send({ type: 'suggestMentions', query: q.query, limit: MENTION_POPUP_ROWS });
      }
    } else this.model.popup = null;
    this.model.overflow = null;
    this.scheduleEstimate();
  }

  /** Keys while the popup is open; true when the key was used (the composer then does nothing else with it). */
  onKey(key: string): boolean {
    const p = this.model.popup;
    if (!p) return false;
    if (key === 'Escape') {
      this.model.popup = null;
      return true;
    }
    if (p.items.length === 0) return false;
    if (key === 'ArrowDown') p.selected = (p.selected + 1) % p.items.length;
    else if (key === 'ArrowUp') p.selected = (p.selected - 1 + p.items.length) % p.items.length;
    else if (key === 'Enter' || key === 'Tab') this.accept(p.selected);
    else return false;
    return true;
  }

  /** Accepts a suggestion: the `@query` in the draft becomes its mention text and a chip is added. */
  accept(index: number): boolean {
    const p = this.model.popup;
    const item = p?.items[index];
    if (!p || !item) return false;
    const draft = this.host.draft();
    const end = p.start + 1 + p.query.length;
    const text = mentionText(item);
    this.host.setDraft(`${draft.slice(0, p.start)}${text} ${draft.slice(end).replace(/^ /, '')}`);
    this.model.popup = null;
    // A rule stays in the prompt as `@name` (the engine strips it and attaches the rule); it is no chip.
    if (item.kind === 'rule') {
      this.scheduleEstimate();
      return true;
    }
    this.addChip({ kind: item.kind, ...(item.target !== null ? { target: item.target } : {}) }, item.label);
    return true;
  }

  addChip(m: Mention, label: string): boolean {
    if (this.model.chips.some((c) => sameMention(c, m)) || this.model.chips.length >= MAX_MENTIONS) return false;
    this.model.chips.push({ ...m, label, tokens: null, status: 'pending', warning: null });
    this.model.overflow = null;
    this.scheduleEstimate(0);
    return true;
  }

  removeChip(index: number): void {
    this.model.chips.splice(index, 1);
    this.model.overflow = null;
    this.model.sendError = null;
    for (const c of this.model.chips) c.blocking = false;
    this.scheduleEstimate(0);
  }

  /**
   * Before a send: a chip the engine said it cannot attach (a missing file, binary, nothing
   * selected) stops it — the chip is marked and `sendError` says why. A prompt is never sent
   * without a mention the user sees attached. True when the send was refused.
   */
  refuseUnattached(): boolean {
    const bad = this.model.chips.filter((c) => c.status === 'warning');
    for (const c of this.model.chips) c.blocking = c.status === 'warning';
    if (bad.length === 0) {
      this.model.sendError = null;
      return false;
    }
    const what = bad.map((c) => `${c.label}${c.warning ? ` (${c.warning})` : ''}`).join('; ');
    this.model.sendError = `Not sent: ${bad.length === 1 ? 'a mention' : `${bad.length} mentions`} cannot be attached — ${what}. Remove ${bad.length === 1 ? 'it' : 'them'} or fix ${bad.length === 1 ? 'it' : 'them'}, then send again.`;
    return true;
  }

  /**
   * The engine refused a send because mentions could not be attached (`context/mentionNotAttached`,
   * `details.mentions`: their indexes and reasons): those chips are marked and the error shows. True (handled).
   */
  markUnattached(message: string, details: unknown): true {
    const listed = (details as { mentions?: unknown } | undefined)?.mentions;
    const bad = Array.isArray(listed) ? listed.filter((b): b is { index: number; warning?: unknown } => typeof (b as { index?: unknown })?.index === 'number') : [];
    for (const b of bad) {
      const chip = this.model.chips[b.index];
      if (!chip) continue;
      chip.status = 'warning';
      chip.warning = typeof b.warning === 'string' ? b.warning : chip.warning;
      chip.blocking = true;
    }
    this.model.sendError = `${message} Remove ${bad.length === 1 ? 'the marked mention' : 'the marked mentions'} or fix ${bad.length === 1 ? 'it' : 'them'}, then send again.`;
    return true;
  }

  /** The mentions to send with the prompt. */
  mentions(): Mention[] {
    return this.model.chips.map((c) => ({ kind: c.kind, ...(c.target !== undefined ? { target: c.target } : {}) }));
  }

  /** After a send: the chips went with the prompt (kept aside until it is answered, see `restoreAfterFailedSend`). */
  clearAfterSend(): void {
    this.lastSent = this.model.chips;
    this.model.chips = [];
    this.model.sendError = null;
    this.model.popup = null;
    this.model.overflow = null;
    this.scheduleEstimate(0);
  }

  /** The engine's answer to a send: which rules it attached and what it warned about (shown by the composer until the next send). */
  noteSent(rules: readonly string[] | undefined, warnings: readonly string[] | undefined): void {
    this.model.sentRules = (rules?.length ?? 0) > 0 || (warnings?.length ?? 0) > 0 ? { rules: [...(rules ?? [])], warnings: [...(warnings ?? [])] } : null;
  }

  /** A send the engine refused: its chips come back (unless new ones were added meanwhile). */
  restoreAfterFailedSend(): void {
    if (this.model.chips.length === 0 && this.lastSent.length > 0) this.model.chips = this.lastSent;
    this.lastSent = [];
    this.scheduleEstimate(0);
  }

  /** Whether a prompt may be sent now: false (and the confirmation shown) when the latest estimate says it does not fit. */
  checkFits(): boolean {
    const e = this.model.estimate;
    if (e && !e.fits && e.window !== null) {
      this.model.overflow = { tokens: e.tokens, window: e.window };
      return false;
    }
    return true;
  }

  /** The open thread changed, or the model: estimate again. */
  refresh(): void {
    this.scheduleEstimate(0);
  }

  scheduleEstimate(ms = ESTIMATE_DEBOUNCE_MS): void {
    if (!this.active) return;
    this.timer?.cancel();
    this.timer = this.host.schedule(() => {
      this.timer = null;
      this.estimateNow();
    }, ms);
  }

  estimateNow(): void {
    const mentions = this.mentions();
    this.estimateRequest = this.host.send({ type: 'estimateContext', threadId: this.host.threadId(), draft: this.host.draft(), ...(mentions.length > 0 ? { mentions } : {}) });
  }

  /** An answer to one of our requests; false when it is not ours (or stale). */
  onResult(requestId: string | undefined, type: string, value: unknown): boolean {
    if (type === 'suggestMentions') {
      if (requestId !== this.suggestRequest) return true; // a stale answer: dropped
      const p = this.model.popup;
      if (p) {
        p.items = (value as CommandResult<'suggestMentions'>).items;
        p.selected = 0;
        p.loading = false;
      }
      return true;
    }
    if (type === 'estimateContext') {
      if (requestId !== this.estimateRequest) return true;
      const e = value as ContextEstimateView;
      this.model.estimate = e;
      // Chips take their sizes and warnings from the estimate, in order (the engine resolves them in the order sent).
      e.mentions.forEach((m, i) => {
        const chip = this.model.chips[i];
        if (chip && sameMention(chip, { kind: m.kind, ...(m.target !== null ? { target: m.target } : {}) })) {
          chip.tokens = m.tokens;
          chip.status = m.status;
          chip.warning = m.warning;
        }
      });
      return true;
    }
    return false;
  }

  /** An estimate failed (no key yet, a model that does not load): the meter hides rather than showing stale numbers. */
  onError(requestId: string | undefined, type: string): boolean {
    if (type === 'estimateContext') {
      if (requestId === this.estimateRequest) this.model.estimate = null;
      return true;
    }
    if (type === 'suggestMentions') {
      if (requestId === this.suggestRequest && this.model.popup) this.model.popup.loading = false;
      return true;
    }
    return false;
  }
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  return n >= 100_000 ? `${Math.round(n / 1000)}k` : `${(n / 1000).toFixed(1)}k`;
}
