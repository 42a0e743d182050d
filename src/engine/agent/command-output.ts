/**
 * Live command output in a turn (SPEC 2.2): a tool call's output stream in the engine's
 * CommandOutputHub (../terminal/hub.ts), whose updates go to the turn's live stream as
 * `commandOutput` chunks (../../protocol/chunks.ts) — merged, at most one per
 * `COMMAND_OUTPUT_FRAME_MS`, so a progress bar redrawn a thousand times a second costs a few
 * frames, and persisted like every chunk (a view reloaded mid-command sees the same lines). The
 * tool gets a `TerminalOutput` to write into; `end` gives the normalised plain text (bounded by
 * TERMINAL_OUTPUT_TAIL_CHARS, with a note of what was cut) for the model and the transcript.
 */
import { encodeCommandOutput, type CommandOutputData } from '../../protocol/chunks';
import { applyUpdate, emptyView, type CommandOutputHub, type CommandOutputUpdate, type CommandOutputView } from '../terminal/hub';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { TerminalOutput } from '../tools/types';

/** Longest time live output waits to be merged into one chunk. */
export const COMMAND_OUTPUT_FRAME_MS = 100;

export function openCommandOutput(hub: CommandOutputHub, streams: TurnStreamRegistry, runId: string, itemId: string): TerminalOutput {
  const commandId = itemId;
  hub.start(commandId);
  // What the views hold, and the frozen lines not yet sent: each flush sends those and the whole live region.
  const view: CommandOutputView = emptyView();
  let pendingFrozen: string[] = [];
  let pendingFrozenFrom = 0;
  let sentAny = false;
  let dirty = false;
  let seq = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!dirty) return;
    dirty = false;
    const update: CommandOutputData['update'] = {
      commandId, seq: ++seq, reset: !sentAny, firstFrozen: view.firstFrozen, frozenFrom: pendingFrozenFrom, frozen: pendingFrozen,
      shift: 0, liveFrom: 0, live: [...view.live],
    };
    sentAny = true;
    pendingFrozen = [];
    try {
      streams.append(runId, 'commandOutput', encodeCommandOutput({ itemId, update }));
    } catch {
      // the turn's stream ended under it (the run was stopped): the tool result still has the text
    }
  };
  const onUpdate = (u: CommandOutputUpdate): void => {
    if (u.reset) {
      pendingFrozen = [];
      sentAny = false;
    }
    if (pendingFrozen.length === 0) pendingFrozenFrom = u.frozenFrom;
    pendingFrozen.push(...u.frozen);
    applyUpdate(view, u);
    dirty = true;
    timer ??= setTimeout(flush, COMMAND_OUTPUT_FRAME_MS);
  };
  const unsubscribe = hub.subscribe(commandId, (e) => {
    if (e.type === 'update') onUpdate(e);
  }, { colors: 'keep' });

  return {
    write: (chunk) => void hub.append(commandId, chunk),
    end: (exitCode) => {
      const result = hub.end(commandId, exitCode);
      flush();
      unsubscribe?.();
      hub.release(commandId);
      return result?.text ?? '';
    },
  };
}
