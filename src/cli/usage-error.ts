/**
 * Bad usage of the CLI, reported one way: a flag value out of range, a missing or extra argument,
 * an unknown option, options that exclude each other. A command throws `CliUsageError` with the
 * command it belongs to; commander's own parse errors (unknown option, missing argument, a value
 * an option parser refused with `InvalidArgumentError`) are turned into one by `reportUsageErrors`.
 * main.ts prints it as `vox: <message> (see \`vox <command> --help\`)` and exits USAGE_EXIT_CODE.
 */
import type { Command, CommanderError } from 'commander';

/** The exit code of bad usage (0 done, 1 the command failed, 2 it was called wrongly). */
export const USAGE_EXIT_CODE = 2;

/** The words that name `cmd` on the command line: `vox queue move`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export class CliUsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = USAGE_EXIT_CODE;
  /** Where to read how the command is used: `see \`vox queue move --help\``. */
  readonly hint: string;

  /** `command`: the command that was misused (its words, or the commander object). */
  constructor(message: string, command: Command | string) {
    super(message);
    this.hint = `see \`${typeof command === 'string' ? command : commandPath(command)} --help\``;
  }

  /** The line main.ts prints on stderr. */
  get line(): string {
    return `vox: ${this.message} (${this.hint})`;
  }
}

/** Commander's codes for help and version output: not errors, even when the exit code is not 0. */
const NOT_USAGE_ERRORS = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/**
 * Makes every command of the tree throw its parse errors as `CliUsageError` instead of printing
 * commander's `error: …` line: the same message, the command's help hint, exit 2. Help and
 * version still throw commander's error (main.ts exits 0, or 2 for help shown on a missing
 * subcommand). Call it once the tree is built.
 */
export function reportUsageErrors(root: Command): void {
  const visit = (cmd: Command) => {
    cmd.configureOutput({ ...cmd.configureOutput(), outputError: () => {} });
    cmd.exitOverride((err: CommanderError) => {
      if (NOT_USAGE_ERRORS.has(err.code)) throw err;
      throw new CliUsageError(err.message.replace(/^error: /, '').replace(/^unknown option '([^']+)'/, 'unknown option $1'), cmd);
    });
    for (const sub of cmd.commands) visit(sub);
  };
  visit(root);
}

