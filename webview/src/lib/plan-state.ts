/**
 * The open thread's Plan / Act mode, its own permission mode and its plan, as the webview shows
 * them: folded from `thread.workModeSet`, `thread.permissionModeSet` and `plan.*` events in order.
 * Pure and JSON-serialisable like the rest of the thread state (./thread-state.ts calls
 * `applyPlanEvent` for these events); fields are optional there, so a state an older build saved
 * still loads.
 */
import type { PermissionModeName, PlanStepStatus, StoredEvent as WireEvent, WorkMode } from '../../../src/protocol/events';

export interface PlanStepView { id: string; text: string; status: PlanStepStatus; note: string | null }
export interface PlanState { planId: string; title: string; steps: PlanStepView[]; status: 'proposed' | 'acting' }

/** What the plan events give the thread state. */
export interface PlanFields {
  workMode?: WorkMode;
  /** The thread's own permission mode (null: the workspace default). */
  permissionMode?: PermissionModeName | null;
  plan?: PlanState | null;
}

export type PlanEvent = Extract<WireEvent, { type: 'thread.workModeSet' | 'thread.permissionModeSet' | 'plan.submitted' | 'plan.edited' | 'plan.stepUpdated' | 'plan.actedOn' }>;

export function isPlanEvent(ev: WireEvent): ev is PlanEvent {
  return ev.type.startsWith('plan.') || ev.type === 'thread.workModeSet' || ev.type === 'thread.permissionModeSet';
}

/** Applies one plan event in place; events about another (older) plan are ignored. */
export function applyPlanEvent(s: PlanFields, ev: PlanEvent): void {
  switch (ev.type) {
    case 'thread.workModeSet':
      s.workMode = ev.mode;
      return;
    case 'thread.permissionModeSet':
      s.permissionMode = ev.mode;
      return;
    case 'plan.submitted':
      s.plan = { planId: ev.planId, title: ev.title, status: 'proposed', steps: ev.steps.map((x) => ({ id: x.id, text: x.text, status: 'pending', note: null })) };
      return;
    case 'plan.edited': {
      const p = s.plan;
      if (!p || p.planId !== ev.planId) return;
      const before = new Map(p.steps.map((x) => [x.id, x]));
      p.title = ev.title;
      p.steps = ev.steps.map((x) => ({ id: x.id, text: x.text, status: before.get(x.id)?.status ?? 'pending', note: before.get(x.id)?.note ?? null }));
      return;
    }
    case 'plan.stepUpdated': {
      const step = s.plan?.planId === ev.planId ? s.plan.steps.find((x) => x.id === ev.stepId) : undefined;
      if (step) Object.assign(step, { status: ev.status, note: ev.note });
      return;
    }
    case 'plan.actedOn':
      if (s.plan?.planId === ev.planId) s.plan.status = 'acting';
      return;
  }
}

/** Steps done (or skipped) of all, for the card's header. */
export function planProgress(p: PlanState): { done: number; total: number } {
  return { done: p.steps.filter((x) => x.status === 'done' || x.status === 'skipped').length, total: p.steps.length };
}
