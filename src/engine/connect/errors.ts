/**
 * `ConnectError`: why listing a provider's models or the connection test failed, one code per
 * failure a user fixes differently (the name does not resolve, nothing listens, the key is
 * wrong, the model does not exist, no answer in time, any other HTTP status with the provider's
 * own message). Every one names the provider and the endpoint (`host:port`); none carries a key.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export type ConnectErrorCode = ErrorCode<'connect'>;

export interface ConnectErrorDetails {
  /** The provider id (`openai`, `ollama`, …). */
  provider?: string;
  /** `host:port` the request went to. */
  endpoint?: string;
  /** The HTTP status, when the server answered. */
  status?: number;
  cause?: unknown;
}

export class ConnectError extends VoxError<'connect'> {
  override readonly name = 'ConnectError';
  readonly domain = 'connect' as const;
  constructor(code: ConnectErrorCode, message: string, readonly details: ConnectErrorDetails = {}) {
    super(code, message, { cause: details.cause });
  }
}
