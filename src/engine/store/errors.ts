/** Typed failures of the SQLite store. Nothing that raises one of these overwrites a file. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
export type StoreErrorCode = ErrorCode<'store'>;

export class StoreError extends VoxError<'store'> {
  override readonly name = 'StoreError';
  readonly domain = 'store' as const;
  constructor(code: StoreErrorCode, message: string, cause?: unknown) {
    super(code, message, { cause });
  }
}
