/**
 * Approval of tool calls. `ApprovalPolicy` says per tool class whether a call runs automatically
 * or must be asked (defaults: read auto, write ask, execute ask), built from user settings with
 * typed validation errors. `ApprovalGate` holds the calls waiting for the user: the agent loop
 * awaits `request`, clients (sidebar buttons, CLI prompt) hear about it through `onPending` and
 * answer with `respond`; an abort cancels a waiting call with `ToolError('cancelled')`.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { ToolError, type AgentTool, type ToolClass } from '../tools/types';

export type ApprovalMode = 'ask' | 'auto';
export type ApprovalDecision = 'approved' | 'denied';
/** How a request ended: the user's decision, or cancelled by an abort or `cancelAll`. */
export type ApprovalOutcome = ApprovalDecision | 'cancelled';

const TOOL_CLASSES: readonly ToolClass[] = ['read', 'write', 'execute'];
const MODES: readonly ApprovalMode[] = ['ask', 'auto'];

/** Reading is harmless; changing files or running code waits for the user unless they opt out. */
export const DEFAULT_APPROVAL_MODES: Readonly<Record<ToolClass, ApprovalMode>> = Object.freeze({
  read: 'auto',
  write: 'ask',
  execute: 'ask',
});

export type ApprovalSettingsErrorCode = Extract<ErrorCode<'approval'>, 'notAnObject' | 'unknownToolClass' | 'invalidMode'>;

/** Settings that cannot be turned into a policy; `key` names the offending entry. */
export class ApprovalSettingsError extends VoxError<'approval'> {
  override readonly name = 'ApprovalSettingsError';
  readonly domain = 'approval' as const;
  constructor(
    code: ApprovalSettingsErrorCode,
    message: string,
    readonly key?: string,
  ) {
    super(code, message);
  }
}

export class ApprovalPolicy {
  private readonly modes: Record<ToolClass, ApprovalMode>;

  constructor(overrides: Partial<Record<ToolClass, ApprovalMode>> = {}) {
    this.modes = { ...DEFAULT_APPROVAL_MODES, ...overrides };
  }

  /**
   * Builds a policy from a settings value such as `{ "write": "auto" }`. `undefined`/`null` give
   * the defaults; classes left out keep their default. Anything else is an `ApprovalSettingsError`.
   */
  static fromSettings(settings: unknown): ApprovalPolicy {
    if (settings === undefined || settings === null) return new ApprovalPolicy();
    if (typeof settings !== 'object' || Array.isArray(settings)) {
      throw new ApprovalSettingsError('notAnObject', `Approval settings must be an object like {"write": "ask"}, got ${JSON.stringify(settings)}.`);
    }
    const overrides: Partial<Record<ToolClass, ApprovalMode>> = {};
    for (const [key, value] of Object.entries(settings)) {
      if (!(TOOL_CLASSES as readonly string[]).includes(key)) {
        throw new ApprovalSettingsError('unknownToolClass', `Unknown tool class "${key}" in approval settings; expected ${TOOL_CLASSES.join(', ')}.`, key);
      }
      if (!(MODES as readonly unknown[]).includes(value)) {
        throw new ApprovalSettingsError('invalidMode', `Approval mode for "${key}" must be "ask" or "auto", got ${JSON.stringify(value)}.`, key);
      }
      overrides[key as ToolClass] = value as ApprovalMode;
    }
    return new ApprovalPolicy(overrides);
  }

  modeFor(toolClass: ToolClass): ApprovalMode {
    return this.modes[toolClass];
  }

  /** Whether a call of `tool` must wait for the user. */
  decide(tool: Pick<AgentTool, 'toolClass'>): ApprovalMode {
    return this.modeFor(tool.toolClass);
  }

  toJSON(): Record<ToolClass, ApprovalMode> {
    return { ...this.modes };
  }
}

export interface ApprovalRequest {
  callId: string;
  /** The thread and run the call belongs to: each client shows it in its own thread. */
  threadId: string;
  runId: string;
  toolName: string;
  argumentsJson: string;
  toolClass: ToolClass;
  /** Why the call is asked (the permission decision's sentence), shown on the approval. */
  reason?: string;
  /** The call writes a protected path (../permissions/protected-paths.ts): asked every time, no "Always allow". */
  protectedPath?: boolean;
  /** Why a call that would have run by itself waits (a safeguard before it failed: "the checkpoint failed: the disk is full"). */
  safeguard?: string;
}

export interface ApprovalSettled {
  callId: string;
  threadId: string;
  runId: string;
  decision: ApprovalOutcome;
}

export type ApprovalGateErrorCode = Extract<ErrorCode<'approval'>, 'unknownCall' | 'duplicateCall' | 'invalidDecision'>;

/** Misuse of the gate: answering a call that is not waiting, asking twice, or a bad decision. */
export class ApprovalGateError extends VoxError<'approval'> {
  override readonly name = 'ApprovalGateError';
  readonly domain = 'approval' as const;
  constructor(
    code: ApprovalGateErrorCode,
    message: string,
    readonly callId: string,
  ) {
    super(code, message);
  }
}

interface Pending {
  request: ApprovalRequest;
  resolve: (d: ApprovalDecision) => void;
  reject: (e: Error) => void;
  detach: () => void;
}

type Listener<T> = (value: T) => void | Promise<void>;

export interface ApprovalGateOptions {
  /** Receives errors thrown (or rejected) by listeners, which never disturb the gate itself; default console.error. */
  onListenerError?: (error: unknown) => void;
}

export class ApprovalGate {
  private readonly pendingCalls = new Map<string, Pending>();
  private readonly pendingListeners = new Set<Listener<ApprovalRequest>>();
  private readonly settledListeners = new Set<Listener<ApprovalSettled>>();

  constructor(private readonly options: ApprovalGateOptions = {}) {}

  /**
   * Waits for the user's decision on one call. Rejects with `ToolError('cancelled')` if `signal`
   * aborts first (or already has), and with `ApprovalGateError('duplicateCall')` if `callId` is
   * already waiting. Listeners are told after the call is registered, so they may answer at once.
   */
  request(req: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    if (signal?.aborted) return Promise.reject(new ToolError('cancelled', `Approval for ${req.toolName} was cancelled.`));
    if (this.pendingCalls.has(req.callId)) {
      return Promise.reject(new ApprovalGateError('duplicateCall', `Call ${req.callId} is already waiting for approval.`, req.callId));
    }
    const request: ApprovalRequest = {
      callId: req.callId, threadId: req.threadId, runId: req.runId, toolName: req.toolName, argumentsJson: req.argumentsJson, toolClass: req.toolClass,
      ...(req.reason !== undefined ? { reason: req.reason } : {}), ...(req.protectedPath ? { protectedPath: true } : {}),
      ...(req.safeguard !== undefined ? { safeguard: req.safeguard } : {}),
    };
    const promise = new Promise<ApprovalDecision>((resolve, reject) => {
      const onAbort = (): void => this.settle(req.callId, 'cancelled');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pendingCalls.set(req.callId, {
        request,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      });
    });
    this.emit(this.pendingListeners, request);
    return promise;
  }

  /** Answers a waiting call. Throws `ApprovalGateError` for a call that is not waiting (unknown or finished). */
  respond(callId: string, decision: ApprovalDecision): void {
    if (decision !== 'approved' && decision !== 'denied') {
      throw new ApprovalGateError('invalidDecision', `Decision must be "approved" or "denied", got ${JSON.stringify(decision)}.`, callId);
    }
    if (!this.pendingCalls.has(callId)) {
      throw new ApprovalGateError('unknownCall', `No tool call ${callId} is waiting for approval (unknown, or already answered or cancelled).`, callId);
    }
    this.settle(callId, decision);
  }

  /** Cancels every waiting call (e.g. when the engine shuts down). */
  cancelAll(): void {
    for (const callId of [...this.pendingCalls.keys()]) this.settle(callId, 'cancelled');
  }

  /** Calls waiting for a decision, oldest first (for a client that joins late); of one thread when given. */
  pending(threadId?: string): ApprovalRequest[] {
    return [...this.pendingCalls.values()].filter((p) => threadId === undefined || p.request.threadId === threadId).map((p) => ({ ...p.request }));
  }

  /** Subscribes to new waiting calls; returns the unsubscribe function. */
  onPending(listener: Listener<ApprovalRequest>): () => void {
    this.pendingListeners.add(listener);
    return () => this.pendingListeners.delete(listener);
  }

  /** Subscribes to calls leaving the gate (answered or cancelled); returns the unsubscribe function. */
  onSettled(listener: Listener<ApprovalSettled>): () => void {
    this.settledListeners.add(listener);
    return () => this.settledListeners.delete(listener);
  }

  private settle(callId: string, outcome: ApprovalOutcome): void {
    const p = this.pendingCalls.get(callId);
    if (!p) return;
    this.pendingCalls.delete(callId);
    p.detach();
    if (outcome === 'cancelled') p.reject(new ToolError('cancelled', `Approval for ${p.request.toolName} was cancelled.`));
    else p.resolve(outcome);
    this.emit(this.settledListeners, { callId, threadId: p.request.threadId, runId: p.request.runId, decision: outcome });
  }

  private emit<T>(listeners: Set<Listener<T>>, value: T): void {
    for (const listener of [...listeners]) {
      try {
        const r = listener(value);
        if (r && typeof (r as Promise<void>).catch === 'function') (r as Promise<void>).catch((e) => this.reportListenerError(e));
      } catch (e) {
        this.reportListenerError(e);
      }
    }
  }

  private reportListenerError(e: unknown): void {
    if (this.options.onListenerError) this.options.onListenerError(e);
    else console.error('[vox] approval listener failed:', e);
  }
}
