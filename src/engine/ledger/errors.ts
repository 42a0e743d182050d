/**
 * LedgerError: the ledger's typed failures — a cost expression, an amount or a price card that
 * does not read, and a call refused before it spends (`insufficientBattery`, `capReached`,
 * `unpricedModel`), with the figures in BU (SPEC 3.4: `InsufficientBattery {requiredBu, remainingBu}`).
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { ErrorDetailsOf } from '../../protocol/wire/error-details';

export class LedgerError extends VoxError<'ledger'> {
  override readonly name = 'LedgerError';
  readonly domain = 'ledger' as const;
  constructor(code: ErrorCode<'ledger'>, message: string, readonly details?: ErrorDetailsOf<'ledger'>) {
    super(code, message);
  }
}
