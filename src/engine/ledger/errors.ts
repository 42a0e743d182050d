/** LedgerError: the ledger's typed failures — a cost expression or an amount that is not one, a price card that does not read. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export class LedgerError extends VoxError<'ledger'> {
  override readonly name = 'LedgerError';
  readonly domain = 'ledger' as const;
  constructor(code: ErrorCode<'ledger'>, message: string) {
    super(code, message);
  }
}
