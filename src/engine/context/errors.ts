/** The context capability's typed failure: a prompt's mention that cannot be attached (`strictMentions`). */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ErrorDetailsOf } from '../../protocol/wire/error-details';

export class ContextError extends VoxError<'context'> {
  override readonly name = 'ContextError';
  readonly domain = 'context' as const;
  constructor(code: ErrorCode<'context'>, message: string, readonly details: ErrorDetailsOf<'context'> = {}) {
    super(code, message);
  }
}
