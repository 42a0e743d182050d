/**
 * The store's schema as the modules contribute it: the core's migrations and projectors
 * (./migrations.ts, ./projections.ts) plus each capability module's — migrations of its tables,
 * projectors of the event types it owns, and observers of event types others own (the search
 * index follows messages). The store imports no capability: the engine hands it the modules'
 * schemas when it opens the database (`VoxStore.open(file, {schema})`).
 *
 * Migrations share one version sequence (`PRAGMA user_version`); two with the same version are a
 * build error reported at open. Every event type has exactly one projector; observers run after
 * it, in module order, each with what its `before` read before the projector changed anything.
 */
import type { SqlDatabase } from './driver';
import type { EventOf, VoxEvent, VoxEventType } from '../../protocol/events';
import { StoreError } from './errors';
import { MIGRATIONS, type Migration } from './migrations';
import { CORE_PROJECTORS, touchThread, type Projector } from './projections';
import { CORE_REDACTABLE, type RedactableColumns } from './redaction-pass';

export type { Migration, Projector, RedactableColumns };

/** A module's view of one event type it does not own: `before` reads, inside the same transaction, what `after` needs. */
export interface Observer<K extends VoxEventType, B = unknown> {
  before?(db: SqlDatabase, e: EventOf<K>): B;
  after(db: SqlDatabase, e: EventOf<K>, time: number, before: B): void;
}

export interface StoreSchema {
  /** The module's name (in errors). */
  module: string;
  /** The module's text columns, for the one-time redaction of databases written before the rule set (./redaction-pass.ts). */
  redactable?: readonly RedactableColumns[];
  migrations?: readonly Migration[];
  projectors?: { [K in VoxEventType]?: Projector<K> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each observer's `before` value is its own
  observers?: { [K in VoxEventType]?: Observer<K, any> };
}

type AnyProjector = (db: SqlDatabase, e: VoxEvent, time: number) => void;
type AnyObserver = { before?(db: SqlDatabase, e: VoxEvent): unknown; after(db: SqlDatabase, e: VoxEvent, time: number, before: unknown): void };

/** The merged schema the store runs with. */
export class ResolvedSchema {
  readonly migrations: readonly Migration[];
  readonly latest: number;
  /** The core's text columns and the modules'. */
  readonly redactable: readonly RedactableColumns[];
  private readonly projectors = new Map<string, AnyProjector>();
  private readonly observers = new Map<string, AnyObserver[]>();

  constructor(modules: readonly StoreSchema[]) {
    const all = [...MIGRATIONS, ...modules.flatMap((m) => m.migrations ?? [])].sort((a, b) => a.version - b.version);
    for (let i = 1; i < all.length; i++) {
      if (all[i]!.version === all[i - 1]!.version) throw new StoreError('invalidEvent', `two migrations claim schema version ${all[i]!.version}: "${all[i - 1]!.description}" and "${all[i]!.description}"`);
    }
    this.migrations = all;
    this.latest = all[all.length - 1]!.version;
    this.redactable = [...CORE_REDACTABLE, ...modules.flatMap((m) => m.redactable ?? [])];
    for (const [type, p] of Object.entries(CORE_PROJECTORS)) this.projectors.set(type, p as AnyProjector);
    for (const m of modules) {
      for (const [type, p] of Object.entries(m.projectors ?? {})) {
        if (this.projectors.has(type)) throw new StoreError('invalidEvent', `event type ${type} has two projectors (module ${m.module} adds one)`);
        this.projectors.set(type, p as AnyProjector);
      }
      for (const [type, o] of Object.entries(m.observers ?? {})) {
        const list = this.observers.get(type) ?? [];
        list.push(o as AnyObserver);
        this.observers.set(type, list);
      }
    }
  }

  /** The event types some projector owns. */
  ownedTypes(): string[] {
    return [...this.projectors.keys()];
  }

  /** Projects one event (inside the transaction that appends it). */
  project(db: SqlDatabase, e: VoxEvent, time: number): void {
    const handler = this.projectors.get(e.type);
    if (!handler) throw new StoreError('invalidEvent', `unknown event type ${(e as { type: string }).type}`);
    const observers = this.observers.get(e.type) ?? [];
    const before = observers.map((o) => o.before?.(db, e));
    handler(db, e, time);
    observers.forEach((o, i) => o.after(db, e, time, before[i]));
    touchThread(db, e, time);
  }
}

let defaults: readonly StoreSchema[] = [];

/**
 * The schemas a store opened without `schema` runs with. Only the test set-up sets this (to the
 * engine's modules, so a test that opens a database directly sees what the engine made); the
 * engine always passes its own.
 */
export function setDefaultStoreSchemas(modules: readonly StoreSchema[]): void {
  defaults = modules;
}

export function defaultStoreSchemas(): readonly StoreSchema[] {
  return defaults;
}
