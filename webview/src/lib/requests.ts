/**
 * The webview's requests waiting for their answer: each command sent gets a request id, and the
 * answer (`result` or `error` with that `inReplyTo`) finds what the command was for. Bounded: the
 * oldest is forgotten when MAX_TRACKED_REQUESTS wait (its late answer is then ignored).
 */
import type { CommandType } from '../../../src/protocol/commands/index';

/** Requests remembered while waiting for a reply. */
export const MAX_TRACKED_REQUESTS = 256;

/** What the controller remembers of a request until its answer. */
export type Pending = { type: CommandType; threadId?: string; parentId?: string; turnId?: string; callId?: string; prompt?: string; append?: boolean; scopeWorkspace?: boolean; /** listThreads: the loader's pass (0: a refresh of the first page). */ walk?: number };

export class RequestTracker {
  private readonly pending = new Map<string, Pending>();
  private next = 1;

  /** A fresh request id (`w1`, `w2`, …) remembered with what the request is for. */
  track(type: CommandType, extra: Omit<Pending, 'type'> = {}): string {
    const requestId = `w${this.next++}`;
    this.pending.set(requestId, { type, ...extra });
    if (this.pending.size > MAX_TRACKED_REQUESTS) {
      const oldest = this.pending.keys().next().value;
      if (oldest !== undefined) this.pending.delete(oldest);
    }
    return requestId;
  }

  /** What `requestId` was for, forgotten from now on; undefined for an unknown or forgotten one. */
  take(requestId: string | undefined): Pending | undefined {
    if (requestId === undefined) return undefined;
    const req = this.pending.get(requestId);
    this.pending.delete(requestId);
    return req;
  }
}
