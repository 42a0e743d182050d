/**
 * The typed error of the repetition guard: `code` singleTokenRun (period 1) or ngramCycle, the
 * cycle's `period` in tokens and its `repetitions`; the message is the shared stop text
 * (../../protocol/repetition.ts) the chat recognises.
 */
import { VoxError } from '../../protocol/wire/vox-error';
import { repetitionMessage, type RepetitionCode } from '../../protocol/repetition';

export class RepetitionError extends VoxError<'guard'> {
  readonly domain = 'guard' as const;
  override readonly name = 'RepetitionError';
  constructor(
    override readonly code: RepetitionCode,
    readonly period: number,
    readonly repetitions: number,
  ) {
    super(code, repetitionMessage(code, period, repetitions));
  }
}
