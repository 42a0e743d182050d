/**
 * Plan mode: the open thread's work mode (thread.workModeSet) and its plan (plan.submitted,
 * plan.edited, plan.stepUpdated, plan.actedOn; events about an older plan are ignored), and
 * their intents: Plan / Act, the user's edit of the plan, a step's status, and
 * "Act on this plan". A first prompt in Plan mode opens its thread in Plan (./prompts.ts).
 */
import { defineFeature } from './feature';

export const plansFeature = defineFeature({
  name: 'plans',
  events: {
    'thread.workModeSet'(s, ev) {
      s.workMode = ev.mode;
    },
    'plan.submitted'(s, ev) {
      s.plan = { planId: ev.planId, title: ev.title, status: 'proposed', steps: ev.steps.map((x) => ({ id: x.id, text: x.text, status: 'pending', note: null })) };
    },
    'plan.edited'(s, ev) {
      const p = s.plan;
      if (!p || p.planId !== ev.planId) return;
      const before = new Map(p.steps.map((x) => [x.id, x]));
      p.title = ev.title;
      p.steps = ev.steps.map((x) => ({ id: x.id, text: x.text, status: before.get(x.id)?.status ?? 'pending', note: before.get(x.id)?.note ?? null }));
    },
    'plan.stepUpdated'(s, ev) {
      const step = s.plan?.planId === ev.planId ? s.plan.steps.find((x) => x.id === ev.stepId) : undefined;
      if (step) Object.assign(step, { status: ev.status, note: ev.note });
    },
    'plan.actedOn'(s, ev) {
      if (s.plan?.planId === ev.planId) s.plan.status = 'acting';
    },
  },
  install(ctx) {
    const m = ctx.model;
    return {
      intents: {
        /** Plan / Act of the open thread, or of the next new thread. */
        setWorkMode(mode: 'plan' | 'act'): void {
          const thread = m.thread;
          if (!thread) m.nextWorkMode = mode;
          else if ((thread.workMode ?? 'act') !== mode) ctx.send({ type: 'setWorkMode', threadId: thread.threadId, mode });
        },
        /** The user's edit of the plan: its title and steps now (false when nothing valid is left). */
        updatePlan(planId: string, title: string, steps: Array<{ id?: string; text: string }>): boolean {
          const thread = m.thread;
          const kept = steps.map((x) => ({ ...x, text: x.text.trim() })).filter((x) => x.text.length > 0);
          if (!thread || title.trim().length === 0 || kept.length === 0) return false;
          ctx.send({ type: 'updatePlan', threadId: thread.threadId, planId, title: title.trim(), steps: kept.map((x) => (x.id ? { id: x.id, text: x.text } : { text: x.text })) });
          return true;
        },
        setPlanStep(planId: string, stepId: string, status: 'pending' | 'inProgress' | 'done' | 'skipped'): void {
          const thread = m.thread;
          if (thread) ctx.send({ type: 'setPlanStep', threadId: thread.threadId, planId, stepId, status });
        },
        /** "Act on this plan": the thread goes to Act and a prompt carrying the plan is sent. */
        actOnPlan(planId: string): void {
          const thread = m.thread;
          if (thread) ctx.send({ type: 'actOnPlan', threadId: thread.threadId, planId });
        },
      },
    };
  },
});
