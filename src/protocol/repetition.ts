/**
 * How a run stopped by the repetition guard (engine/guards/, SPEC 3.1) reads: its `run.ended`
 * error starts with REPEATED_ITSELF, then the detail in parentheses. Engine and clients share this
 * one format, so the chat recognises the case (no new event field: older events and builds read
 * it as a plain failure) and shows "stopped: the model repeated itself" with Retry.
 */

/** The stable start of the error of a run the repetition guard stopped. */
export const REPEATED_ITSELF = 'stopped: the model repeated itself';

export type RepetitionCode = 'singleTokenRun' | 'ngramCycle';

/** The error text of a stop: `stopped: the model repeated itself (the same token 33 times)`. */
export function repetitionMessage(code: RepetitionCode, period: number, repetitions: number): string {
  const detail = code === 'singleTokenRun'
    ? `the same token ${repetitions} times in a row`
    : `a cycle of ${period} tokens, ${repetitions} times in a row`;
  return `${REPEATED_ITSELF} (${detail})`;
}

/** The detail of a repetition stop (`a cycle of 7 tokens, 5 times in a row`), or null for any other error. */
export function repetitionDetail(error: string | null | undefined): string | null {
  if (!error || !error.startsWith(REPEATED_ITSELF)) return null;
  const m = /^\s*\((.*)\)\s*$/s.exec(error.slice(REPEATED_ITSELF.length));
  return m ? m[1]! : '';
}
