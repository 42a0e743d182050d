/**
 * What a user types into the Usage tab's input boxes, read strictly: dollars with at most six
 * decimals (the ledger's micro-dollar), positive, under a cap on typing mistakes. Pure: tested in Node.
 */

/** The most dollars one grant or cap may name (a typo guard: 1e6 dollars is not a budget). */
export const MAX_DOLLARS_TYPED = 100_000;

const DOLLARS = /^\$?\s*(\d{1,9})(?:\.(\d{1,6}))?$/;

/** Dollars from `5`, `$2.50`, `0.000001`; an Error in words for anything else. */
export function parseDollars(text: string): number | Error {
  const m = DOLLARS.exec(text.trim());
  if (!m) return new Error('Type dollars, e.g. 5 or 2.50 (at most six decimals).');
  const usd = Number(`${m[1]}.${m[2] ?? '0'}`);
  if (usd <= 0) return new Error('Type more than $0.');
  if (usd > MAX_DOLLARS_TYPED) return new Error(`At most $${MAX_DOLLARS_TYPED.toLocaleString('en-US')} at a time.`);
  return usd;
}

/** An input box's validation message (null: fine); `emptyOk` for a box where empty means "remove". */
export function dollarsProblem(text: string, emptyOk: boolean): string | null {
  if (emptyOk && text.trim() === '') return null;
  const r = parseDollars(text);
  return r instanceof Error ? r.message : null;
}
