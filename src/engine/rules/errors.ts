/** RuleError: every typed failure of rules (SPEC 6.1) — bad or reserved names, broken files, writes refused. */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

export class RuleError extends VoxError<'rule'> {
  override readonly name = 'RuleError';
  readonly domain = 'rule' as const;
  constructor(
    code: ErrorCode<'rule'>,
    message: string,
    /** The file (workspace-relative) or settings source, and the 1-based line, when one is to blame. */
    readonly source: string | null = null,
    readonly line: number | null = null,
  ) {
    super(code, message);
  }
}
