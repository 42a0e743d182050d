/** BundleError: every typed failure of exporting or importing a bundle (SPEC 6.6): not a bundle, a newer format, malformed content, too large, a file that cannot be read or written, an unknown thread, a conflict with this install. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export class BundleError extends VoxError<'bundle'> {
  override readonly name = 'BundleError';
  readonly domain = 'bundle' as const;
  constructor(code: ErrorCode<'bundle'>, message: string) {
    super(code, message);
  }
}
