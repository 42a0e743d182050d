/**
 * Opening a long thread fast: the first batch of a thread's events (the replay from seq 0 after
 * `subscribeThread`) can hold tens of thousands of events. Applied one by one to the app's
 * `$state` proxy, every push and field write goes through Svelte's proxy traps and signals (about
 * 0.5 s for 2,000 messages); applied to a plain copy that then replaces the proxied thread, they
 * cost plain-object writes, and Svelte proxies the result lazily, only as far as it is read (the
 * virtualised list reads the rows it shows). Only an empty state qualifies: a thread that already
 * has entries keeps its identity (its rows, its subscriptions) and takes events in place.
 */
import type { ThreadState } from './thread-state';

/** Events in one batch from which an empty thread is replayed into a plain copy. */
export const BULK_REPLAY_EVENTS = 200;

/** A plain copy of `thread` to apply `eventCount` events to, or null to apply them in place. */
export function replayTarget(thread: ThreadState, eventCount: number): ThreadState | null {
  if (eventCount < BULK_REPLAY_EVENTS || thread.lastEventSeq !== 0 || thread.entries.length !== 0) return null;
  return JSON.parse(JSON.stringify(thread)) as ThreadState; // empty: a few fields
}
