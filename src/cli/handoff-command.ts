/**
 * `vox thread handoff <threadId> [--model M] [--strategy S] [--context TEXT] [--json]` (protocol
 * `previewHandoff`, SPEC 5.1): the `<context_handoff>` preamble the thread's next prompt would get
 * on a model — the runs it covers, what it carries and leaves out, and the preamble itself.
 * Reads only; a strategy outside the five is a usage error (exit 2).
 */
import { Option, type Command } from 'commander';
import { HANDOFF_STRATEGIES } from '../protocol/handoff';
import type { CommandResult } from '../protocol/commands/index';
import { withClient } from './connect';
import { print, type Flags } from './output';

type HandoffFlags = Flags & { cwd?: string; model?: string; strategy?: (typeof HANDOFF_STRATEGIES)[number]; context?: string };

function human(r: CommandResult<'previewHandoff'>): string {
  const h = r.handoff;
  if (!h) return `No handoff for ${r.model}: the strategy covers no run of this thread.`;
  return [
    `${r.modelChanged ? 'A prompt on' : 'Not automatic (same model as the last run) — preview for'} ${r.model}: ${h.strategy}, covered_runs ${h.coveredFrom}..${h.coveredTo} from ${h.sourceModel}`,
    `${h.turnsVerbatim} turns verbatim, ${h.turnsCompacted} compacted, ${h.turnsOmitted} left out${h.checkpoints ? `, ${h.checkpoints} checkpoints` : ''}${h.strategy === 'manualContext' ? `, your text: ${h.manualChars} characters (${h.manualCharsOmitted} cut off)` : ''}; ${h.tokens} tokens, ${h.bytes} bytes`,
    '',
    h.preamble,
  ].join('\n');
}

/** Adds `handoff` to the `vox thread` group (registered by ./branch-commands.ts, which must run first). */
export function registerHandoffCommand(program: Command, run: (p: Promise<number>) => void): void {
  const thread = program.commands.find((c) => c.name() === 'thread');
  if (!thread) throw new Error('vox thread must be registered before vox thread handoff');
  thread.command('handoff').description('preview the <context_handoff> preamble the thread\'s next prompt would get on a model (SPEC 5.1)')
    .argument('<threadId>')
    .option('--model <ref>', 'the model of the next prompt (default: the configured one)')
    .addOption(new Option('--strategy <name>', 'what the handoff covers and how').choices([...HANDOFF_STRATEGIES]).default('deltaSinceTargetLastSeen'))
    .option('--context <text>', 'your text, for --strategy manualContext')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((threadId: string, o: HandoffFlags) => run(withClient({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, queuePolicy: 'own', reading: true }, async ({ client }) => {
      const r = await client.call('previewHandoff', {
        threadId, ...(o.model ? { model: o.model } : {}), ...(o.strategy ? { strategy: o.strategy } : {}), ...(o.context !== undefined ? { manualContext: o.context } : {}),
      });
      print(o, human(r), r);
      return 0;
    })));
}
