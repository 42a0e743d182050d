/**
 * Putting features together (./feature.ts). `FeatureRegistry` is the event side: the reducer of
 * each event type, from the one feature that owns it (../thread-state.ts's `applyEvents`
 * dispatches over it). `installFeatures` is the controller side: each feature installed with the
 * controller's context, its intents gathered by name and its update, result and error handlers
 * in tables by type. Both throw when two features claim the same name, event, update, command
 * answer or intent: a list of features that overlaps is a programming error, found at start.
 */
import type { CommandType } from '../../../../src/protocol/commands/index';
import type { StoredEvent, VoxEventType } from '../../../../src/protocol/events';
import type { EventsResult, ThreadState } from '../thread-model';
import type { ErrorTable, EventReducer, Feature, FeatureContext, FeatureUpdateType, Installed, ResultTable, UpdateTable } from './feature';

type AnyReducer = (state: ThreadState, ev: StoredEvent, result: EventsResult) => void;

export class FeatureRegistry {
  private readonly reducers = new Map<VoxEventType, { feature: string; reduce: AnyReducer }>();

  constructor(readonly features: readonly Feature[]) {
    const names = new Set<string>();
    for (const f of features) {
      if (names.has(f.name)) throw new Error(`two features are named ${f.name}`);
      names.add(f.name);
      for (const [type, reduce] of Object.entries(f.events ?? {}) as [VoxEventType, EventReducer<VoxEventType>][]) {
        const owner = this.reducers.get(type);
        if (owner) throw new Error(`event ${type} is owned by both ${owner.feature} and ${f.name}`);
        this.reducers.set(type, { feature: f.name, reduce: reduce as AnyReducer });
      }
    }
  }

  /** Applies `ev` through its owner's reducer; an event no feature owns changes nothing. */
  apply(state: ThreadState, ev: StoredEvent, result: EventsResult): void {
    this.reducers.get(ev.type)?.reduce(state, ev, result);
  }

  /** The feature that owns events of `type`, if any. */
  ownerOf(type: VoxEventType): string | undefined {
    return this.reducers.get(type)?.feature;
  }

  /** The event types some feature owns. */
  ownedEvents(): VoxEventType[] {
    return [...this.reducers.keys()];
  }
}

type Handler = (...args: never[]) => unknown;

/** Features installed in a controller: in order, with their handlers by type. */
export interface InstalledFeatures {
  readonly list: readonly Installed<object>[];
  /** The intents of each feature, by feature name. */
  readonly intents: ReadonlyMap<string, object>;
  readonly updates: ReadonlyMap<FeatureUpdateType, Handler>;
  readonly results: ReadonlyMap<CommandType, Handler>;
  readonly errors: ReadonlyMap<CommandType, Handler>;
}

function claim<K extends string>(into: Map<K, Handler>, owners: Map<K, string>, table: object | undefined, feature: string, what: string): void {
  for (const [type, handler] of Object.entries(table ?? {}) as [K, Handler][]) {
    const owner = owners.get(type);
    if (owner !== undefined) throw new Error(`${what} ${type} is handled by both ${owner} and ${feature}`);
    owners.set(type, feature);
    into.set(type, handler);
  }
}

/**
 * Installs `features` with `ctx`, in order; each intent is also defined on `target` (the
 * controller) under its own name, which no other feature's intent nor `target` itself may have.
 */
export function installFeatures(features: readonly Feature[], ctx: FeatureContext, target: object): InstalledFeatures {
  const list: Installed<object>[] = [];
  const intents = new Map<string, object>();
  const updates = new Map<FeatureUpdateType, Handler>();
  const results = new Map<CommandType, Handler>();
  const errors = new Map<CommandType, Handler>();
  const owners = { updates: new Map<FeatureUpdateType, string>(), results: new Map<CommandType, string>(), errors: new Map<CommandType, string>() };
  for (const f of features) {
    const installed = f.install?.(ctx) ?? {};
    list.push(installed);
    const own = installed.intents ?? {};
    intents.set(f.name, own);
    for (const [key, value] of Object.entries(own)) {
      if (key in target) throw new Error(`intent ${key} of ${f.name} is taken`);
      Object.defineProperty(target, key, { value, enumerable: true });
    }
    claim(updates, owners.updates, installed.updates satisfies UpdateTable | undefined, f.name, 'update');
    claim(results, owners.results, installed.results satisfies ResultTable | undefined, f.name, 'the answer to');
    claim(errors, owners.errors, installed.errors satisfies ErrorTable | undefined, f.name, 'the error of');
  }
  if (list.filter((x) => x.saved).length > 1) throw new Error('more than one feature keeps saved rows');
  return { list, intents, updates, results, errors };
}
