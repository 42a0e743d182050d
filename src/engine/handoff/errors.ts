/** HandoffError: the typed failures of previewing a context handoff (SPEC 5.1). */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export class HandoffError extends VoxError<'handoff'> {
  override readonly name = 'HandoffError';
  readonly domain = 'handoff' as const;
  constructor(code: ErrorCode<'handoff'>, message: string) {
    super(code, message);
  }
}
