/** Typed failures of compaction (SPEC 3.7): a bad target, nothing to compact, a model answer that is not a summary. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ErrorDetailsOf } from '../../protocol/wire/error-details';

export class CompactionError extends VoxError<'compaction'> {
  override readonly name = 'CompactionError';
  readonly domain = 'compaction' as const;
  constructor(code: ErrorCode<'compaction'>, message: string, readonly details: ErrorDetailsOf<'compaction'> = {}) {
    super(code, message);
  }
}
