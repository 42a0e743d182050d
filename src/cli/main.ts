#!/usr/bin/env node
/**
 * `vox` — Vox outside VS Code. Every command is a client of the engine's protocol (./connect.ts),
 * like the VS Code views; `--json` prints what the protocol answered, `--help` works on every
 * command and subcommand. Keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY),
 * never from files; the database lives at $VOX_HOME/vox.db (default ~/.vox/vox.db).
 *
 * Exit codes: 0 done; 1 the command failed (a typed error is printed as `vox: <Domain>Error
 * (<code>): <message>`); 2 bad usage (`vox: <message> (see \`vox <command> --help\`)`, ./usage-error.ts);
 * 75 the thread is running another turn (`chat --no-queue`); 130 cancelled.
 */
import { Command, CommanderError, Option } from 'commander';
import { ClientError } from '../client/engine-client';
import { chat } from './chat-command';
import { packageRoot } from './connect';
import { runModelCommand } from './model-command';
import { show, threads } from './thread-commands';
import { registerCheckpointCommands, registerWorktreeCommands } from './vcs-commands';
import { registerReviewCommands } from './review-commands';
import { registerVariantCommands } from './variant-commands';
import { registerQueueCommands } from './queue-commands';
import { registerRunCommands } from './run-commands';
import { registerHistoryCommand } from './history-command';
import { registerSearchCommand } from './search-command';
import { collectMention, registerContextCommands } from './context-commands';
import { registerModelsCommand } from './models-command';
import { checkMode, registerPermissionCommands } from './permission-commands';
import { registerBranchCommands } from './branch-commands';
import { registerCompactCommand } from './compact-command';
import { registerRulesCommands } from './rules-commands';
import { registerImportCommands, sessionGroup } from './import-commands';
import { registerSessionCommands } from './session-commands';
import { registerHandoffCommand } from './handoff-command';
import { registerMcpServeCommand } from './mcp-serve-command';
import { registerForkCommands } from './fork-command';
import { registerUsageCommands } from './usage-commands';
import { HANDOFF_STRATEGIES } from '../protocol/handoff';
import { registerMcpClientCommands } from './mcp-commands';
import { CliUsageError, reportUsageErrors, USAGE_EXIT_CODE } from './usage-error';
import { errorLabel } from './output';

const MODELS_HELP = 'models: local:demo (default, offline demo), local:/path/model.gguf, openai:NAME, ollama:NAME, anthropic:NAME, openrouter:NAME, lmstudio:NAME, compat:NAME ($VOX_COMPAT_BASE_URL); list them with `vox models`';

export { errorLabel };

function describeError(e: unknown): string {
  if (e instanceof ClientError) return `${errorLabel(e.domain, e.code)}: ${e.message}`;
  const err = e as Error & { code?: string; domain?: string };
  if (typeof err.domain === 'string' && typeof err.code === 'string') return `${errorLabel(err.domain, err.code)}: ${err.message}`;
  return `${err.name ?? 'Error'}${err.code ? ` (${err.code})` : ''}: ${err.message ?? String(e)}`;
}

/** The whole command tree; `run` receives each command's work (main awaits it). */
export function buildProgram(run: (p: Promise<number>) => void): Command {
  const program = new Command('vox')
    .description('Vox, the coding agent, from the command line')
    .addHelpText('after', `\n${MODELS_HELP}`);
  program.command('chat').description('send a prompt and stream the answer').argument('<prompt...>')
    .option('--model <ref>', 'model (default $VOX_MODEL or local:demo)').option('--thread <id>', 'continue this thread')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--yes', 'approve every tool call').option('--json', 'print chunks and the result as JSON lines')
    .option('--no-queue', 'when the thread is running a turn, fail (exit 75) instead of queueing').option('--steer', 'when queued, let the running turn take the prompt at its next step')
    .option('--mention <spec>', 'attach context: file:PATH, folder:PATH, git, git:COMMIT, thread:ID (repeatable)', collectMention)
    .option('--allow-overflow', 'send even when the prompt does not fit the model\'s context window')
    .option('--mode <mode>', 'permission mode: ask (default) | autoEdits | fullAuto; rules in .vox/permissions.json still apply')
    .addOption(new Option('--handoff <strategy>', 'send this prompt with a <context_handoff> block of this strategy (preview: vox thread handoff)').choices([...HANDOFF_STRATEGIES]))
    .option('--handoff-context <text>', 'your text, for --handoff manualContext')
    .action((words: string[], o, cmd: Command) => run((async () => chat(words.join(' '), { ...o, ...(checkMode(o.mode, cmd) ? { mode: o.mode } : {}) }))()));
  program.command('threads').description('list threads, most recent first').option('--limit <n>', 'at most this many', (v) => Number(v))
    .option('--of <threadId>', 'the subagent threads of this thread, with their status')
    .option('--cwd <dir>').option('--json', 'print JSON').action((o) => run(threads(o)));
  program.command('show').description('print a thread\'s messages').argument('<threadId>').option('--cwd <dir>').option('--json', 'print JSON')
    .action((id: string, o) => run(show(id, o)));
  program.command('model').description('the demo model and recommended GGUF downloads: path | list | download [N|URL] [--dest DIR]')
    .argument('<what>').argument('[which]').option('--dest <dir>', 'download directory').option('--json', 'print JSON')
    .action((what: string, which: string | undefined, o, cmd: Command) => run(runModelCommand(what, which, o, packageRoot(), cmd)));
  registerCheckpointCommands(program, run);
  registerReviewCommands(program, run);
  registerWorktreeCommands(program, run);
  registerVariantCommands(program, run);
  registerQueueCommands(program, run);
  registerRunCommands(program, run);
  registerHistoryCommand(program, run);
  registerSearchCommand(program, run);
  registerContextCommands(program, run);
  registerModelsCommand(program, run);
  registerPermissionCommands(program, run);
  registerBranchCommands(program, run);
  registerCompactCommand(program, run);
  registerHandoffCommand(program, run);
  registerForkCommands(program, run);
  registerUsageCommands(program, run);
  registerRulesCommands(program, run);
  registerImportCommands(sessionGroup(program), run);
  registerSessionCommands(sessionGroup(program), run);
  const mcp = program.command('mcp').description('Model Context Protocol: the servers Vox\'s agent uses (list | tools | restart | enable | disable), and Vox as a server for other agents (serve --stdio)');
  registerMcpClientCommands(mcp, run);
  registerMcpServeCommand(mcp);
  reportUsageErrors(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  let pending: Promise<number> | null = null;
  const program = buildProgram((p) => void (pending = p));
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return USAGE_EXIT_CODE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return pending ? await pending : 0;
  } catch (e) {
    if (e instanceof CliUsageError) {
      process.stderr.write(`${e.line}\n`);
      return e.exitCode;
    }
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : USAGE_EXIT_CODE; // help and version exit 0; help shown for a missing subcommand 2
    process.stderr.write(`vox: ${describeError(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  // A reader that went away (`vox threads | head -1`) ends the command quietly, not with a stack.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
