/**
 * A command's progress bar in the real chat (SPEC 2.2), in the chat UI session's side bar after
 * the run-control checks: the scripted model calls run_command with a script that redraws one
 * progress line (carriage returns) about twenty times over a few seconds and ends with a coloured
 * line; Approve in the tool card; while it runs, the tool call's terminal view keeps ONE line whose
 * percentage goes up (the bar updates in place, several states seen), and at the end it shows the
 * last state and the coloured line (red, from the theme's ANSI colours); the model and the store
 * get the normalised text (`progress 100%`, no intermediate frames). One named, counted check.
 */
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import * as h from './harness';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { assert } from './ui-session';

export const COMMAND_OUTPUT_CHECKS = {
  commandOutput: 'chat UI: a run_command progress bar updates in place in its tool call (one line, rising percentages), the model gets the normalised text',
} as const;

const PROMPT = 'Command output: show me a progress bar';
const STEPS = 20;
/** One line redrawn STEPS+1 times (0 %, 5 % … 100 %), 150 ms apart, then a red word on a new line. */
const SCRIPT = `i=0; while [ $i -le ${STEPS} ]; do printf '\\rprogress %3d%%' $((i*100/${STEPS})); i=$((i+1)); sleep 0.15; done; printf '\\n\\033[31mfailed\\033[0m 0 tests\\n'`;
const ANSWER = 'The progress bar finished.';
const NORMALISED = 'progress 100%\nfailed 0 tests\n[exit code 0]';

const TERMINAL_JS = `(() => {
  const t = document.querySelector('section.tool[data-status] .terminal');
  if (!t) return null;
  const lines = Array.from(t.querySelectorAll('.line')).map((l) => l.textContent.replace(/\\u200b/g, '').trimEnd());
  const red = Array.from(t.querySelectorAll('span')).find((s) => s.textContent === 'failed');
  return { lines, red: red ? getComputedStyle(red).color : null };
})()`;

interface TerminalSample { lines: string[]; red: string | null }

export async function runCommandOutputCheck(c: ChatContext, names = COMMAND_OUTPUT_CHECKS): Promise<void> {
  const { o, timed, page: p, fake: fk, requireState, sidebar, scripted, send, shot, dbFile } = c;
  await o.check(names.commandOutput, () =>
    timed(names.commandOutput, () => {
      requireState('view', 'model');
      return scripted([toolCallTurn([{ name: 'run_command', args: { command: SCRIPT } }]), textTurn(words(ANSWER), { eventDelayMs: 10 })], async () => {
        const before = fk.requests.length;
        const view = await sidebar();
        await send(view, PROMPT);
        // run_command asks for approval in this session (execute: ask).
        await view.locator('section.tool vscode-button.approve').click({ timeout: 20_000 });
        const seen = new Set<string>();
        let maxLines = 0;
        let last: TerminalSample | null = null;
        await h.waitFor('the progress bar to reach 100%', 30_000, async () => {
          last = (await view.evaluate(TERMINAL_JS)) as TerminalSample | null;
          if (!last) return false;
          const progress = last.lines.filter((l) => l.startsWith('progress'));
          if (progress.length > 0) {
            maxLines = Math.max(maxLines, progress.length);
            seen.add(progress[0]!);
          }
          return progress[0] === 'progress 100%';
        }, 60).catch((e: Error) => {
          throw new Error(`${e.message}; the terminal view shows ${JSON.stringify(last)}`);
        });
        assert(maxLines === 1, `the progress line was shown as ${maxLines} lines at once: it did not update in place`);
        assert(seen.size >= 3, `only ${seen.size} states of the bar were seen (${[...seen].join(', ')}): it did not stream while the command ran`);
        h.log(`command output UI: ${seen.size} bar states seen`);
        const samples = await watch(view, 'the turn to end', 20_000, (s) => s.status !== null && s.status !== 'running');
        assert(samples[samples.length - 1]!.status === 'completed', `the run ended ${samples[samples.length - 1]!.status}`);
        const end = (await view.evaluate(TERMINAL_JS)) as TerminalSample;
        assert(JSON.stringify(end.lines) === JSON.stringify(['progress 100%', 'failed 0 tests']), `the terminal view ends with ${JSON.stringify(end.lines)}`);
        assert(end.red !== null && /^rgb\((\d+), (\d+), (\d+)\)$/.test(end.red) && Number(/^rgb\((\d+)/.exec(end.red)![1]) > 150, `"failed" is drawn in ${end.red}, expected the theme's ANSI red`);
        await shot('e2e-command-output');
        const toModel = (fk.requests[before + 1]?.body?.messages as { role: string; content: unknown }[] | undefined)?.at(-1);
        assert(toModel?.role === 'tool' && toModel.content === NORMALISED, `the model got ${JSON.stringify(toModel)}, expected the normalised ${JSON.stringify(NORMALISED)}`);
        const store = VoxStore.open(dbFile, { readonly: true, schema: STORE_SCHEMAS });
        try {
          const thread = store.listThreads().find((t) => t.title === PROMPT);
          assert(thread, 'the thread is not in the store');
          const run = store.runs(thread.id)[0]!;
          const item = store.items(run.id).find((i) => i.kind === 'toolCall');
          assert(item?.content === NORMALISED, `the stored tool result is ${JSON.stringify(item?.content)}`);
        } finally {
          store.close();
        }
      });
    }), p);
}
