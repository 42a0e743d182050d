/**
 * Approvals: tool calls waiting for the user, of every thread (`approvalRequested` /
 * `approvalSettled` updates, `listApprovals` answers; saved with the webview state so a reload
 * keeps them), Approve / Deny, and their end — settled, answered, or the item completed. The
 * sticky bar (../approval-bar.ts) shows one of the open thread's at a time: Next walks them, and
 * the keybindings' host commands answer the one it shows.
 */
import { approvalsOf, type AppModel } from '../app-model';
import { nextApproval, shownApproval } from '../approval-bar';
import { defineFeature } from './feature';

function dropApproval(m: AppModel, callId: string): void {
  const i = m.approvals.findIndex((a) => a.callId === callId);
  if (i >= 0) m.approvals.splice(i, 1);
}

export const approvalsFeature = defineFeature({
  name: 'approvals',
  install(ctx) {
    const m = ctx.model;
    return {
      intents: {
        respondToApproval(callId: string, decision: 'approved' | 'denied'): void {
          const approval = m.approvals.find((a) => a.callId === callId);
          if (!approval || approval.responding) return;
          approval.responding = true;
          ctx.send({ type: 'respondToApproval', callId, decision }, { callId });
        },
        /** The bar's approval (of the open thread) answered: Approve / Deny on the bar, or their keybindings. */
        /** "Always allow…" on the bar: approves the shown call and adds the chosen narrow rule (the engine checks it). */
        alwaysAllowShownApproval(choice: { kind: 'commandPrefix' | 'tool' | 'pathPattern'; value: string; scope: 'thread' | 'workspace' }): boolean {
          const shown = shownApproval(approvalsOf(m, m.thread?.threadId ?? null), m.approvalFocus);
          if (!shown || shown.approval.responding) return false;
          shown.approval.responding = true;
          ctx.send({ type: 'respondToApproval', callId: shown.approval.callId, decision: 'approved', alwaysAllow: choice }, { callId: shown.approval.callId });
          return true;
        },
        respondToShownApproval(decision: 'approved' | 'denied'): boolean {
          const shown = shownApproval(approvalsOf(m, m.thread?.threadId ?? null), m.approvalFocus);
          if (!shown) return false;
          const approval = shown.approval;
          if (approval.responding) return false;
          approval.responding = true;
          ctx.send({ type: 'respondToApproval', callId: approval.callId, decision }, { callId: approval.callId });
          return true;
        },
        /** Next on the bar: the following waiting approval of the open thread. */
        showNextApproval(): void {
          m.approvalFocus = nextApproval(approvalsOf(m, m.thread?.threadId ?? null), m.approvalFocus);
        },
      },
      updates: {
        approvalRequested(u) {
          if (m.approvals.some((a) => a.callId === u.callId)) return;
          m.approvals.push({
            callId: u.callId, threadId: u.threadId, runId: u.runId, toolName: u.toolName, argumentsJson: u.argumentsJson, toolClass: u.toolClass,
            ...(u.reason !== undefined ? { reason: u.reason } : {}), ...(u.protectedPath ? { protectedPath: true } : {}), ...(u.safeguard ? { safeguard: u.safeguard } : {}),
            ...(u.alwaysAllow ? { alwaysAllow: u.alwaysAllow } : {}), responding: false,
          });
          ctx.persistNow(); // a reload must not lose it (see PersistedState.approvals)
        },
        approvalSettled: (u) => dropApproval(m, u.callId),
      },
      results: {
        listApprovals(value) {
          for (const a of value.approvals) {
            if (!m.approvals.some((x) => x.callId === a.callId)) m.approvals.push({ ...a, responding: false });
          }
        },
        respondToApproval(_value, req) {
          if (req.callId) dropApproval(m, req.callId);
        },
      },
      errors: {
        respondToApproval(_u, req) {
          if (req.callId) dropApproval(m, req.callId); // and the notice says why
        },
      },
      eventsApplied(_thread, res) {
        for (const id of res.completedItems) dropApproval(m, id);
      },
    };
  },
});
