/**
 * Prompt recall in the composer (SPEC 6.3), as a pure state machine plus the history it walks.
 *
 * The history is the engine's (protocol `listPromptHistory`: the last MAX_RECALLED_PROMPTS
 * prompts as typed, across threads and reloads, newest last) plus what this view sent since.
 *
 * - ArrowUp with the caret on the FIRST line (anywhere on it, no selection spanning lines): the
 *   first press stashes the draft (whatever it holds, empty or typed) and shows the newest prompt;
 *   further presses walk back (the caret goes to the start, so the next press walks on). At the
 *   oldest, the key does what it does in a text box.
 * - ArrowDown with the caret on the LAST line, while walking: walks forward (caret at the end);
 *   past the newest it gives back the stashed draft exactly, caret at its end, and the walk ends.
 *   Not walking, ArrowDown is the text box's.
 * - Typing into a recalled prompt makes it the draft: the walk ends and the stash is dropped (the
 *   next ArrowUp stashes the edited text). Sending ends the walk too (`sent`).
 * - With the mention popup open the arrows belong to the popup (the composer never asks here).
 */
import { MAX_PROMPT_HISTORY } from '../../../src/protocol/commands/history';

/** The most prompts kept for recall (the newest; the engine keeps as many). */
export const MAX_RECALLED_PROMPTS = MAX_PROMPT_HISTORY;

export interface RecallState {
  /** The history index shown; null when not walking. */
  readonly index: number | null;
  /** The draft as it was when the walk started. */
  readonly stash: string;
  /** The text the walk put in the composer (an edit is seen as a draft that differs from it). */
  readonly shown: string;
}

export const NOT_WALKING: RecallState = { index: null, stash: '', shown: '' };

/** The composer's text and selection when an arrow key is pressed. */
export interface ArrowInput {
  draft: string;
  selectionStart: number;
  selectionEnd: number;
}

/** What the composer shows after the key: the text and where the caret goes. */
export interface RecallStep {
  state: RecallState;
  draft: string;
  caret: number;
}

/** The caret (or the whole selection) is on the first line of `text`. */
export function onFirstLine(text: string, selectionStart: number, selectionEnd: number): boolean {
  return !text.slice(0, Math.max(selectionStart, selectionEnd)).includes('\n');
}

/** The caret (or the whole selection) is on the last line of `text`. */
export function onLastLine(text: string, selectionStart: number, selectionEnd: number): boolean {
  return !text.slice(Math.min(selectionStart, selectionEnd)).includes('\n');
}

/** The walk is still on: the draft is the prompt it showed, untouched. */
function walking(state: RecallState, draft: string): state is RecallState & { index: number } {
  return state.index !== null && draft === state.shown;
}

/** ArrowUp: the next step, or null when the key is the text box's. */
export function arrowUp(history: readonly string[], state: RecallState, input: ArrowInput): RecallStep | null {
  if (!onFirstLine(input.draft, input.selectionStart, input.selectionEnd)) return null;
  if (walking(state, input.draft)) {
    if (state.index === 0) return null; // the oldest: nothing further back
    const index = state.index - 1;
    return { state: { ...state, index, shown: history[index]! }, draft: history[index]!, caret: 0 };
  }
  if (history.length === 0) return null;
  const index = history.length - 1;
  return { state: { index, stash: input.draft, shown: history[index]! }, draft: history[index]!, caret: 0 };
}

/** ArrowDown: the next step, or null when the key is the text box's. */
export function arrowDown(history: readonly string[], state: RecallState, input: ArrowInput): RecallStep | null {
  if (!onLastLine(input.draft, input.selectionStart, input.selectionEnd)) return null;
  if (!walking(state, input.draft)) return null;
  if (state.index + 1 < history.length) {
    const index = state.index + 1;
    return { state: { ...state, index, shown: history[index]! }, draft: history[index]!, caret: history[index]!.length };
  }
  return { state: NOT_WALKING, draft: state.stash, caret: state.stash.length };
}

/** The history with `prompt` sent as the newest: a repeat of the newest is not added again; capped. */
export function withSent(history: readonly string[], prompt: string): string[] {
  if (prompt.trim().length === 0 || history[history.length - 1] === prompt) return [...history];
  return [...history, prompt].slice(-MAX_RECALLED_PROMPTS);
}

/**
 * The recall of one composer: the history (set from the engine, grown by sends) and the walk.
 * `key` answers an arrow key; the composer applies the step (text and caret) or lets the key be.
 */
export class PromptRecall {
  private history: string[] = [];
  private state: RecallState = NOT_WALKING;
  /** Prompts sent since the engine's history was last asked for (its answer may not have them). */
  private sentSinceRequest: string[] = [];

  /** The engine's history is being asked for: prompts sent from now on are kept until its answer. */
  requested(): void {
    this.sentSinceRequest = [];
  }

  /**
   * The engine's history (newest last), with prompts this view sent that it does not list yet kept
   * at the end (by default those sent since `requested`).
   */
  setHistory(fromEngine: readonly string[], sentSince: readonly string[] = this.sentSinceRequest): void {
    let h = fromEngine.slice(-MAX_RECALLED_PROMPTS);
    for (const p of sentSince) if (!h.includes(p)) h = withSent(h, p);
    this.history = h;
    if (this.state.index !== null && this.state.index >= h.length) this.state = NOT_WALKING;
  }

  prompts(): readonly string[] {
    return this.history;
  }

  key(direction: 'up' | 'down', input: ArrowInput): RecallStep | null {
    const step = direction === 'up' ? arrowUp(this.history, this.state, input) : arrowDown(this.history, this.state, input);
    if (step) this.state = step.state;
    else if (this.state.index !== null && input.draft !== this.state.shown) this.state = NOT_WALKING; // edited: the walk ended
    return step;
  }

  /** A prompt was sent: it is the newest, and any walk (and its stash) ends. */
  sent(prompt: string): void {
    this.history = withSent(this.history, prompt);
    this.sentSinceRequest = withSent(this.sentSinceRequest, prompt); // bounded like the history
    this.state = NOT_WALKING;
  }

  /** Whether a walk is on (for tests and the composer's hint). */
  walking(): boolean {
    return this.state.index !== null;
  }
}
