/**
 * How the handoff counts tokens: a real tokenizer (gpt-tokenizer's o200k_base, or cl100k_base
 * for a gpt-4/gpt-3.5 target; ../providers/token-count.ts), applied in pieces. BPE is quadratic
 * in one long word (a run of 60,000 CJK characters took about a minute on this machine), so a
 * text is counted in pieces cut after line breaks and at most COUNT_PIECE_CHARS code points: a
 * cut only keeps tokens from merging across it, so the sum is at least the count of the whole
 * in practice (a safe side for a cap) and the time stays linear.
 */
import { openaiEncodingOf, textCounter, type Encoding } from '../providers/token-count';

/** Longest piece (code points) the tokenizer gets at once. */
export const COUNT_PIECE_CHARS = 1_000;

/** Counts `text` with `count` piece by piece. */
export function countInPieces(count: (s: string) => number, text: string): number {
  let total = 0;
  for (const line of text.split(/(?<=\n)/)) {
    if (line.length <= COUNT_PIECE_CHARS) {
      total += count(line);
      continue;
    }
    const cps = Array.from(line);
    for (let i = 0; i < cps.length; i += COUNT_PIECE_CHARS) total += count(cps.slice(i, i + COUNT_PIECE_CHARS).join(''));
  }
  return total;
}

/** The encoding a handoff to `model` is counted with (a real tokenizer for every target). */
export function handoffEncoding(model: string): Encoding {
  return openaiEncodingOf(model) === 'cl100k_base' ? 'cl100k_base' : 'o200k_base';
}

/** A synchronous piecewise counter for a handoff to `model`. */
export async function handoffCounter(model: string): Promise<(text: string) => number> {
  const count = await textCounter(handoffEncoding(model));
  return (text) => countInPieces(count, text);
}
