/**
 * The webview's feature contract. A feature is one area of the chat (the queue, plans,
 * branches, MCP, …) and declares:
 *  - `name`, unique among the installed features;
 *  - `events`: its reducer slice — how the stored events it owns change the open thread's state,
 *    one reducer per event type (a table, like the engine's projectors). Pure: ../thread-state.ts
 *    applies them without a controller (tests, the bulk replay);
 *  - `install(ctx)`: what it does inside the Controller (../controller.ts) — its intents (what the
 *    views call; they send protocol commands through `ctx.send`), the engine updates and command
 *    answers it handles (tables by update type and command type), and the controller's moments it
 *    follows (start, a new engine session, events applied, runs ended, …).
 *
 * Every event type, update type and command answer has at most one owner among the installed
 * features; ./registry.ts checks that when the features are put together.
 */
import type { ClientCommand, CommandResult, CommandType } from '../../../../src/protocol/commands/index';
import type { StoredEventOf, VoxEventType } from '../../../../src/protocol/events';
import type { DraftSaveMessage, DraftsRequestMessage, HostAction } from '../../../../src/protocol/host';
import type { EngineUpdate, UpdateOf } from '../../../../src/protocol/updates';
import type { AppModel, Logger } from '../app-model';
import type { Pending } from '../requests';
import type { EventsResult, ThreadState } from '../thread-model';

/** Applies one stored event of type `K` to the open thread's state, in place (it may note what changed in `result`). */
export type EventReducer<K extends VoxEventType> = (state: ThreadState, ev: StoredEventOf<K>, result: EventsResult) => void;
/** A feature's reducer slice: the event types it owns. */
export type EventTable = { readonly [K in VoxEventType]?: EventReducer<K> };

/** Updates a feature may own; `events`, `result` and `error` are the controller's, which hands them on. */
export type FeatureUpdateType = Exclude<EngineUpdate['type'], 'events' | 'result' | 'error'>;
export type UpdateTable = { readonly [K in FeatureUpdateType]?: (u: UpdateOf<K>) => void };
/** The decoded answer to a command the controller sent (`req`: what it remembered of the request). */
export type ResultTable = { readonly [K in CommandType]?: (value: CommandResult<K>, req: Pending, inReplyTo: string | undefined) => void };
export type ErrorUpdate = UpdateOf<'error'>;
/** A command's error; `true`: handled here, no error notice. */
export type ErrorTable = { readonly [K in CommandType]?: (u: ErrorUpdate, req: Pending) => boolean | void };

/** What the controller gives an installed feature. */
export interface FeatureContext {
  readonly model: AppModel;
  readonly log: Logger;
  /** Sends a command, remembering `extra` until its answer; returns its request id. */
  send(command: ClientCommand, extra?: Omit<Pending, 'type'>): string;
  /** An error notice on screen. */
  notify(code: string, message: string): void;
  /** Something outside the engine, for the extension (src/protocol/host.ts). */
  hostAction(action: HostAction, args?: { threadId?: string }): void;
  /** The composer's draft to the extension host's copy, or a request for it (src/protocol/host.ts). */
  draftMessage(message: DraftSaveMessage | DraftsRequestMessage): void;
  /** Another installed feature's intents (looked up when called: install order does not matter). */
  use<I extends object>(feature: Feature<I>): I;
  /** Opens a thread: subscribes it from its last seqs (a no-op for the open one). */
  openThread(threadId: string): void;
  /** Leaves the open thread for an empty composer. */
  newThread(): void;
  /** Leaves the open thread (unsubscribed, saved) without opening another: it is gone. */
  closeThread(): void;
  /** Subscribes the open thread and its streaming turns again, from the last seqs its state has seen. */
  resubscribe(): void;
  /** The turn streams no more (it ended, or the engine refused it): leaving the thread need not unsubscribe it. */
  forgetTurn(turnId: string): void;
  /** Saves the webview state now. */
  persistNow(): void;
  /** Marks the state unsaved: the next save, or the flush on hide, writes it. */
  deferSave(): void;
  /** A new engine session (or changed settings): every installed feature's `reconnected`, in order. */
  reconnected(): void;
}

/** What an installed feature does inside the controller; every part is optional. */
export interface Installed<I extends object> {
  /**
   * What the views call. Each own property (a function, or an object such as a class instance
   * with its own methods) becomes a property of the controller under the same name.
   */
  readonly intents?: I;
  readonly updates?: UpdateTable;
  readonly results?: ResultTable;
  readonly errors?: ErrorTable;
  /** Every answer (result or error), before its request is looked up: also the answer to a request the controller forgot. */
  replied?(inReplyTo: string | undefined): void;
  /** The controller starts (after the saved state is read back), in feature order. */
  start?(): void;
  /** A new engine session: its subscriptions and lists are ours to ask for again. */
  reconnected?(): void;
  /** Another thread was opened, or the composer left the open one for a new thread. */
  threadChanged?(): void;
  /** A batch of the open thread's events was applied (a replay: once, when it is swapped in). */
  eventsApplied?(thread: ThreadState, res: EventsResult): void;
  /** Runs of the open thread ended in the batch just applied. */
  runsEnded?(thread: ThreadState, runIds: readonly string[]): void;
  dispose?(): void;
  /** Rows saved beside the open thread with the webview state and read back at start (the thread list); one feature at most. */
  readonly saved?: { savedJson(): string | null; restore(json: string | null): void };
}

export interface Feature<I extends object = object> {
  readonly name: string;
  readonly events?: EventTable;
  install?(ctx: FeatureContext): Installed<I>;
}

/** Declares a feature (its intents' type is inferred from `install`). */
export function defineFeature<I extends object = object>(feature: Feature<I>): Feature<I> {
  return feature;
}

/** The intents a feature installs. */
export type IntentsOf<F> = F extends Feature<infer I> ? I : never;
