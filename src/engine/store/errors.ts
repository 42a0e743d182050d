/** Typed failures of the SQLite store. Nothing that raises one of these overwrites a file. */
export type StoreErrorCode =
  | 'notSqlite'
  | 'corrupt'
  | 'newerVersion'
  | 'locked'
  | 'notFound'
  | 'conflict'
  | 'invalidEvent'
  | 'io'
  | 'nativeModule';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(readonly code: StoreErrorCode, message: string, override readonly cause?: unknown) {
    super(message);
  }
}
