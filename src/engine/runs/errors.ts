/** Typed failures of starting and controlling runs. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ErrorDetailsOf } from '../../protocol/wire/error-details';

export type RunErrorCode = ErrorCode<'run'>;

export class RunError extends VoxError<'run'> {
  override readonly name = 'RunError';
  readonly domain = 'run' as const;
  constructor(
    code: RunErrorCode,
    message: string,
    /** The run that holds the thread (threadBusy), or the run asked about. */
    readonly details: ErrorDetailsOf<'run'> = {},
  ) {
    super(code, message);
  }
}
