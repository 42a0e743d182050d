/**
 * Projections of the plan-mode and permission-mode events: the
 * thread's work mode and permission mode (its rules and ceiling only check the thread exists), and its plans with their steps (one JSON column; a
 * plan has few steps). Part of the one projector table in ./projections.ts.
 */
import type { SqlDatabase } from './driver';
import type { EventOf, PlanStepStatus } from '../../protocol/events';
import { StoreError } from './errors';

export interface StoredPlanStep { id: string; text: string; status: PlanStepStatus; note: string | null }

type P<K extends 'thread.workModeSet' | 'thread.permissionModeSet' | 'thread.permissionRulesSet' | 'thread.ceilingSet' | 'plan.submitted' | 'plan.edited' | 'plan.stepUpdated' | 'plan.actedOn'> =
  (db: SqlDatabase, e: EventOf<K>, time: number) => void;

function stepsOf(db: SqlDatabase, planId: string, threadId: string): StoredPlanStep[] {
  const row = db.prepare('SELECT steps FROM plans WHERE plan_id = ? AND thread_id = ?').get(planId, threadId) as { steps: string } | undefined;
  if (!row) throw new StoreError('notFound', `plan ${planId} is not in thread ${threadId}`);
  return JSON.parse(row.steps) as StoredPlanStep[];
}

function thread(db: SqlDatabase, threadId: string, set: string, value: string | null): void {
  const info = db.prepare(`UPDATE threads SET ${set} = ? WHERE id = ? AND deleted = 0`).run(value, threadId);
  if (info.changes === 0) throw new StoreError('notFound', `thread ${threadId} does not exist`);
}

export const PLAN_PROJECTORS: {
  'thread.workModeSet': P<'thread.workModeSet'>; 'thread.permissionModeSet': P<'thread.permissionModeSet'>; 'thread.permissionRulesSet': P<'thread.permissionRulesSet'>; 'thread.ceilingSet': P<'thread.ceilingSet'>; 'plan.submitted': P<'plan.submitted'>;
  'plan.edited': P<'plan.edited'>; 'plan.stepUpdated': P<'plan.stepUpdated'>; 'plan.actedOn': P<'plan.actedOn'>;
} = {
  'thread.workModeSet'(db, e) {
    thread(db, e.threadId, 'work_mode', e.mode);
  },
  'thread.permissionModeSet'(db, e) {
    thread(db, e.threadId, 'permission_mode', e.mode);
  },
  'thread.permissionRulesSet'(db, e) {
    // The rules are read from the event log (../permissions/thread-rules.ts); the thread must exist.
    const row = db.prepare('SELECT 1 FROM threads WHERE id = ? AND deleted = 0').get(e.threadId);
    if (!row) throw new StoreError('notFound', `thread ${e.threadId} does not exist`);
  },
  'thread.ceilingSet'(db, e) {
    // The ceiling is read from the event log (../permissions/thread-ceiling.ts); the thread must exist.
    const row = db.prepare('SELECT 1 FROM threads WHERE id = ? AND deleted = 0').get(e.threadId);
    if (!row) throw new StoreError('notFound', `thread ${e.threadId} does not exist`);
  },
  'plan.submitted'(db, e, time) {
    db.prepare("UPDATE plans SET status = 'superseded', updated_at = ? WHERE thread_id = ? AND status != 'superseded'").run(time, e.threadId);
    const steps: StoredPlanStep[] = e.steps.map((s) => ({ id: s.id, text: s.text, status: 'pending', note: null }));
    db.prepare("INSERT INTO plans (plan_id, thread_id, run_id, title, steps, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'proposed', ?, ?)")
      .run(e.planId, e.threadId, e.runId, e.title, JSON.stringify(steps), time, time);
  },
  'plan.edited'(db, e, time) {
    const before = new Map(stepsOf(db, e.planId, e.threadId).map((s) => [s.id, s]));
    const steps = e.steps.map((s) => ({ id: s.id, text: s.text, status: before.get(s.id)?.status ?? 'pending', note: before.get(s.id)?.note ?? null }));
    db.prepare('UPDATE plans SET title = ?, steps = ?, updated_at = ? WHERE plan_id = ?').run(e.title, JSON.stringify(steps), time, e.planId);
  },
  'plan.stepUpdated'(db, e, time) {
    const steps = stepsOf(db, e.planId, e.threadId);
    const step = steps.find((s) => s.id === e.stepId);
    if (!step) throw new StoreError('notFound', `step ${e.stepId} is not in plan ${e.planId}`);
    step.status = e.status;
    step.note = e.note;
    db.prepare('UPDATE plans SET steps = ?, updated_at = ? WHERE plan_id = ?').run(JSON.stringify(steps), time, e.planId);
  },
  'plan.actedOn'(db, e, time) {
    const info = db.prepare("UPDATE plans SET status = 'acting', updated_at = ? WHERE plan_id = ? AND thread_id = ?").run(time, e.planId, e.threadId);
    if (info.changes === 0) throw new StoreError('notFound', `plan ${e.planId} is not in thread ${e.threadId}`);
  },
};
