/**
 * Permission and plan commands: the effective permission mode and rules of
 * a thread or the workspace, changing the mode (the thread's own, or the workspace default),
 * Plan / Act of a thread, its plan (read, edit, tick a step) and "Act on this plan".
 */
import { arrayOf, int, literal, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { MAX_PROMPT_CHARS, modelRef, name, nonEmpty } from './common';
import { defineCommand } from './define';
import { permissionMode, planStepStatus, workMode } from '../events';

/** Longest plan title or step text a client may send. */
export const MAX_PLAN_FIELD_CHARS = 2_000;
/** Most steps a client may send in one plan edit. */
export const MAX_PLAN_EDIT_STEPS = 50;

export const permissionRuleView = object({
  origin: str, action: literal('allow', 'ask', 'deny'), tool: str, command: nullable(str), path: nullable(str), reason: nullable(str), label: str,
  /** Which source holds it (settings, the workspace's file, the thread's own) and its index there: what `removePermissionRule` names. */
  scope: optional(literal('settings', 'workspace', 'thread')), index: optional(int),
});
export const permissionsView = object({
  mode: permissionMode,
  modeLabel: str,
  /** `thread`: the thread's own choice; `settings`: the workspace default; `default`: nothing set (Ask every time). */
  modeSource: literal('thread', 'settings', 'default'),
  /** Rules in order: the settings' first, then the workspace file's, then the thread's own. Deny beats ask beats allow beats the mode. */
  rules: arrayOf(permissionRuleView),
  /** Malformed rule sources (while any is listed, every call is asked). */
  errors: arrayOf(object({ source: str, jsonPath: str, reason: str, message: str })),
  workspaceFile: str,
  /** Paths whose writes are asked in every mode, with why: the built-in ones, then the settings' (`vox.protectedPaths`). */
  protectedPaths: optional(arrayOf(object({ path: str, why: str, source: literal('builtin', 'settings') }))),
  /** The thread's Plan / Act mode (null without a thread). */
  workMode: nullable(workMode),
});
export type PermissionsView = Infer<typeof permissionsView>;

export const planStepView = object({ id: str, text: str, status: planStepStatus, note: nullable(str) });
export const planView = object({
  planId: str, threadId: str, runId: nullable(str), title: str, steps: arrayOf(planStepView),
  status: literal('proposed', 'acting', 'superseded'), createdAt: int, updatedAt: int,
});
export type PlanView = Infer<typeof planView>;

const planText = nonEmpty(MAX_PLAN_FIELD_CHARS);

export const permissionCommands = {
  getPermissions: defineCommand('getPermissions', {
    readOnly: true,
    summary: 'The permission mode in force (of a thread, or the workspace default) and the effective rules, with any rule-file errors.',
    requires: ['read'],
    params: { threadId: optional(name) },
    result: permissionsView,
  }),
  setPermissionMode: defineCommand('setPermissionMode', {
    summary: 'Sets the permission mode: the thread\'s own (null: follow the default), or the default in the workspace\'s settings (VS Code: .vscode/settings.json) or the user\'s.',
    requires: ['owner'],
    params: { scope: literal('thread', 'workspace', 'user'), threadId: optional(name), mode: nullable(permissionMode) },
    result: permissionsView,
  }),
  removePermissionRule: defineCommand('removePermissionRule', {
    summary: 'Removes a rule from the workspace\'s .vox/permissions.json or a thread\'s own rules, named by its index and label as listed (refused when it changed meanwhile).',
    requires: ['owner'],
    params: { scope: literal('thread', 'workspace'), threadId: optional(name), index: int, label: str },
    result: permissionsView,
  }),
  setWorkMode: defineCommand('setWorkMode', {
    summary: 'Switches a thread between Plan (read tools only, answers with a plan) and Act.',
    requires: ['write'],
    params: { threadId: name, mode: workMode },
    result: object({ threadId: str, workMode }),
  }),
  getPlan: defineCommand('getPlan', {
    readOnly: true,
    summary: 'A thread\'s Plan / Act mode and its current plan (null when none).',
    requires: ['read'],
    params: { threadId: name },
    result: object({ threadId: str, workMode, plan: nullable(planView) }),
  }),
  updatePlan: defineCommand('updatePlan', {
    summary: 'Edits a plan: its title and steps as they are now (kept steps carry their id; new ones have none).',
    requires: ['write'],
    params: { threadId: name, planId: name, title: planText, steps: refine(arrayOf(object({ id: optional(name), text: planText })), (a) => a.length > 0 && a.length <= MAX_PLAN_EDIT_STEPS, `1 to ${MAX_PLAN_EDIT_STEPS} steps`) },
    result: planView,
  }),
  setPlanStep: defineCommand('setPlanStep', {
    summary: 'Sets a plan step\'s status (the user ticks it off or reopens it).',
    requires: ['write'],
    params: { threadId: name, planId: name, stepId: name, status: planStepStatus },
    result: planView,
  }),
  actOnPlan: defineCommand('actOnPlan', {
    summary: 'Switches the thread to Act and sends a prompt carrying the plan (queued while the thread runs).',
    requires: ['write'],
    params: { threadId: name, planId: name, prompt: optional(nonEmpty(MAX_PROMPT_CHARS)), model: optional(modelRef) },
    result: object({ threadId: str, runId: nullable(str), queued: nullable(object({ entryId: str, position: int })) }),
  }),
};
