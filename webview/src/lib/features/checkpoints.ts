/**
 * "Restore to here" in the chat (SPEC 4.2): each run's turn-end checkpoint (checkpoint.captured),
 * and the restore flow through the same protocol commands as the Checkpoints view —
 * `previewRestore` first (what is deleted, by owner; overwritten; brought back), then
 * `restoreCheckpoint` (files) once confirmed, and `undoRestore` from the bar that stays after it
 * until dismissed or the next turn starts. The flow's state is `model.restore` (../app-model.ts).
 */
import type { RestoreFlow } from '../restore-state';
import { defineFeature } from './feature';

export type { RestoreFlow, RestorePreview } from '../restore-state';

export const checkpointsFeature = defineFeature({
  name: 'checkpoints',
  events: {
    'checkpoint.captured'(state, ev) {
      const run = ev.runId !== null && ev.trigger === 'turnEnd' ? state.runs[ev.runId] : undefined;
      if (run) run.checkpoint = ev.ordinal;
    },
  },
  install(ctx) {
    const flow = (): RestoreFlow | null => ctx.model.restore ?? null;
    return {
      intents: {
        restore: {
          /** Asks what restoring the run's turn-end checkpoint would do (the preview shows before anything runs). */
          toHere(runId: string): void {
            const thread = ctx.model.thread;
            const ordinal = thread?.runs[runId]?.checkpoint;
            if (!thread || ordinal === undefined) return;
            ctx.model.restore = { phase: 'previewing', threadId: thread.threadId, runId, ordinal, preview: null };
            ctx.send({ type: 'previewRestore', threadId: thread.threadId, ordinal }, { threadId: thread.threadId });
          },
          /** Runs the previewed restore (files only; the conversation stays). */
          confirm(): void {
            const f = flow();
            if (f?.phase !== 'preview') return;
            ctx.model.restore = { ...f, phase: 'restoring' };
            ctx.send({ type: 'restoreCheckpoint', threadId: f.threadId, ordinal: f.ordinal, mode: 'files' }, { threadId: f.threadId });
          },
          /** Puts the files back as they were just before the restore. */
          undo(): void {
            const f = flow();
            if (f?.phase !== 'restored') return;
            ctx.model.restore = { ...f, phase: 'undoing' };
            ctx.send({ type: 'undoRestore', restorePoint: f.restorePoint }, { threadId: f.threadId });
          },
          dismiss(): void {
            ctx.model.restore = null;
          },
        },
      },
      results: {
        previewRestore(value) {
          const f = flow();
          if (f?.phase === 'previewing') ctx.model.restore = { ...f, phase: 'preview', preview: value };
        },
        restoreCheckpoint(value) {
          const f = flow();
          if (f?.phase !== 'restoring') return;
          ctx.model.restore = value.files
            ? { phase: 'restored', threadId: f.threadId, runId: f.runId, ordinal: f.ordinal, restorePoint: value.files.restorePoint, changed: value.files.changed.length }
            : null;
        },
        undoRestore(value) {
          const f = flow();
          if (f?.phase === 'undoing') ctx.model.restore = { ...f, phase: 'undone', changed: value.files.changed.length };
        },
      },
      errors: {
        // The error notice says why; the flow ends so the turn offers Restore to here again.
        previewRestore: () => void (ctx.model.restore = null),
        restoreCheckpoint: () => void (ctx.model.restore = null),
        undoRestore: () => {
          const f = flow();
          if (f?.phase === 'undoing') ctx.model.restore = { ...f, phase: 'restored' };
        },
      },
      threadChanged() {
        ctx.model.restore = null;
      },
      eventsApplied(thread) {
        const f = flow();
        // The next turn of the thread the restore was in ends the Undo bar (the Checkpoints view keeps Undo restore).
        if (f && f.threadId === thread.threadId && (f.phase === 'restored' || f.phase === 'undone')) {
          const run = thread.runs[f.runId];
          if (run && Object.values(thread.runs).some((r) => r.ordinal > run.ordinal && r.status === 'running')) ctx.model.restore = null;
        }
      },
    };
  },
});
