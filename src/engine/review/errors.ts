/** The review's typed failures (domain `review`, codes in ../../protocol/wire/vox-error.ts). */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export type ReviewErrorCode = ErrorCode<'review'>;

export class ReviewError extends VoxError<'review'> {
  override readonly name = 'ReviewError';
  readonly domain = 'review' as const;
  constructor(code: ReviewErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
