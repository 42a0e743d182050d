/**
 * MCP Apps and forks (SPEC 5.3). The app a tool call returned rides on its item
 * (`item.completed {app}`, ./runs.ts) and its live stream segment (`toolResult {app}`); the state
 * the app saved (mcpApp.stateSaved) goes on its item here, so the frame gets it back when the
 * thread replays. Intents under `mcpApps`: an app's state saved through `setMcpAppState` (the
 * frame awaits the answer: the bytes kept, or the engine's refusal in words), and "Fork from
 * here" on an answer through `forkThread` (the new thread opens).
 */
import type { ClientCommand, CommandResult, CommandType } from '../../../../src/protocol/commands/index';
import type { RunView } from '../run-views';
import { defineFeature } from './feature';
import { threadsFeature } from './threads';

/** Sets the saved state of the app item `itemId` (an unknown item — not replayed yet, or another thread's — is ignored). */
export function applyAppStateSaved(runs: Record<string, RunView>, itemId: string, saved: string): boolean {
  for (const run of Object.values(runs)) {
    const item = run.items.find((i) => i.itemId === itemId);
    if (item) {
      item.appState = saved;
      return true;
    }
  }
  return false;
}

export interface McpAppIntentDeps {
  send(command: ClientCommand): string;
  /** The new fork: reload the list and open it. */
  openThread(threadId: string): void;
}

type Waiter = { resolve: (r: CommandResult<'setMcpAppState'>) => void; reject: (message: string) => void };

export class McpAppIntents {
  private readonly saves = new Map<string, Waiter>();
  private readonly forks = new Set<string>();

  constructor(private readonly deps: McpAppIntentDeps) {}

  /** Saves `state` for the app of `itemId`; settles with the engine's answer. */
  saveState(threadId: string, itemId: string, state: string): Promise<CommandResult<'setMcpAppState'>> {
    return new Promise((resolve, reject) => {
      const id = this.deps.send({ type: 'setMcpAppState', threadId, itemId, state });
      this.saves.set(id, { resolve, reject: (message) => reject(new Error(message)) });
    });
  }

  /** Forks `threadId` at `messageId` into a new thread, which then opens. */
  fork(threadId: string, messageId: string): void {
    this.forks.add(this.deps.send({ type: 'forkThread', threadId, messageId }));
  }

  /** True when the answer was one of these intents'. */
  onResult(inReplyTo: string | undefined, type: CommandType, value: unknown): boolean {
    if (inReplyTo === undefined) return false;
    if (type === 'setMcpAppState') {
      const w = this.saves.get(inReplyTo);
      this.saves.delete(inReplyTo);
      w?.resolve(value as CommandResult<'setMcpAppState'>);
      return w !== undefined;
    }
    if (type === 'forkThread' && this.forks.delete(inReplyTo)) {
      this.deps.openThread((value as CommandResult<'forkThread'>).threadId);
      return true;
    }
    return false;
  }

  /** True when the error is answered here (an app's save: the frame gets it); a fork's refusal stays a notice. */
  onError(inReplyTo: string | undefined, type: CommandType, message: string): boolean {
    if (inReplyTo === undefined) return false;
    if (type === 'setMcpAppState') {
      const w = this.saves.get(inReplyTo);
      this.saves.delete(inReplyTo);
      w?.reject(message);
      return w !== undefined;
    }
    if (type === 'forkThread') this.forks.delete(inReplyTo);
    return false;
  }
}

export const mcpAppsFeature = defineFeature({
  name: 'mcpApps',
  events: {
    'mcpApp.stateSaved'(state, ev) {
      applyAppStateSaved(state.runs, ev.itemId, ev.state);
    },
  },
  install(ctx) {
    const mcpApps = new McpAppIntents({
      send: (c) => ctx.send(c),
      openThread: (id) => {
        ctx.use(threadsFeature).loadThreads();
        ctx.openThread(id);
      },
    });
    return {
      intents: { mcpApps },
      results: {
        setMcpAppState: (value, _req, inReplyTo) => void mcpApps.onResult(inReplyTo, 'setMcpAppState', value),
        forkThread: (value, _req, inReplyTo) => void mcpApps.onResult(inReplyTo, 'forkThread', value),
      },
      errors: {
        setMcpAppState: (u) => mcpApps.onError(u.inReplyTo, 'setMcpAppState', u.message), // the app's frame gets it
        forkThread: (u) => mcpApps.onError(u.inReplyTo, 'forkThread', u.message),
      },
    };
  },
});
