/**
 * Palette commands for long runs (SPEC 2.4), clients of the same protocol commands as the chat:
 * "Vox: Steer the Running Turn…" (a prompt the running turn takes at its next step),
 * "Vox: Queue a Prompt…" (it runs when the turn ends) and "Vox: Rate-Limited Runs…" (Resume now,
 * Snooze, auto-resume off/on for a run waiting for a rate limit). One contribution (./contribution.ts).
 */
import * as vscode from 'vscode';
import type { EngineClient } from '../client/engine-client';
import type { ExtensionContribution } from './contribution';

/** Snooze choices offered, in minutes. */
const SNOOZE_MINUTES = [5, 15, 60];

async function threadTitle(client: EngineClient, threadId: string): Promise<string> {
  return (await client.call('getThread', { threadId }).catch(() => null))?.thread.title ?? threadId;
}

/** The running thread to act on: the only one, or the user's pick. */
async function pickRunningThread(client: EngineClient): Promise<string | undefined> {
  const runs = (await client.call('listRuns', {})).runs.filter((r) => r.kind !== 'variant');
  if (runs.length === 0) {
    void vscode.window.showInformationMessage('Vox: no turn is running.');
    return undefined;
  }
  if (runs.length === 1) return runs[0]!.threadId;
  const items = await Promise.all(runs.map(async (r) => ({ label: await threadTitle(client, r.threadId), description: r.model, threadId: r.threadId })));
  return (await vscode.window.showQuickPick(items, { placeHolder: 'Which running thread?' }))?.threadId;
}

export const runControlCommands: ExtensionContribution = {
  name: 'run control',
  commands: ['vox.steer', 'vox.queuePrompt', 'vox.rateLimits'],
  activate({ host, log }, scope) {
    const reg = (id: string, fn: (...args: unknown[]) => unknown) => scope.command(id, fn, { log });
    const send = (steer: boolean) => async () => {
      const client = await host.client();
      const threadId = await pickRunningThread(client);
      if (!threadId) return;
      const prompt = await vscode.window.showInputBox({
        prompt: steer ? 'The running turn takes this at its next step (before its next model call or tool batch)' : 'This runs when the current turn ends',
        ignoreFocusOut: true,
      });
      if (!prompt?.trim()) return;
      const r = await client.call('sendPrompt', { threadId, prompt, ifBusy: 'queue', ...(steer ? { steer: true } : {}) });
      const where = r.queued ? `queued (position ${r.queued.position + 1})${steer ? ', steering the running turn' : ''}` : 'started';
      void vscode.window.showInformationMessage(`Vox: prompt ${where}.`);
    };
    reg('vox.steer', send(true));
    reg('vox.queuePrompt', send(false));
    reg('vox.rateLimits', async () => {
      const client = await host.client();
      const { waits } = await client.call('listWaits', {});
      if (waits.length === 0) return void vscode.window.showInformationMessage('Vox: no run is waiting for a rate limit.');
      const items = await Promise.all(waits.map(async (w) => {
        const due = Math.max(w.waiting.resetAtMs, w.waiting.snoozedUntilMs ?? 0);
        const when = w.waiting.autoResume ? `resumes at ${new Date(due).toLocaleTimeString()}` : 'auto-resume off';
        return { label: await threadTitle(client, w.threadId), description: `${w.model} · ${when}${w.orphaned ? ' · its window was closed' : ''}`, w };
      }));
      const pick = waits.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { placeHolder: 'Which run?' });
      if (!pick) return;
      const actions = [
        { label: 'Resume now', run: () => client.call('resumeRun', { runId: pick.w.runId }) },
        ...SNOOZE_MINUTES.map((m) => ({ label: `Snooze ${m} min`, run: () => client.call('snoozeRun', { runId: pick.w.runId, forMs: m * 60_000 }) })),
        pick.w.waiting.autoResume
          ? { label: "Don't auto-resume", run: () => client.call('setAutoResume', { runId: pick.w.runId, autoResume: false }) }
          : { label: 'Auto-resume', run: () => client.call('setAutoResume', { runId: pick.w.runId, autoResume: true }) },
      ];
      const action = await vscode.window.showQuickPick(actions, { placeHolder: `${pick.label}: ${pick.w.waiting.message}` });
      await action?.run();
    });
  },
};
