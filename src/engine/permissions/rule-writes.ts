/**
 * Where "Always allow" rules are written and removed: a thread's own rules live in the store (the
 * latest `thread.permissionRulesSet` event of the thread, read from the event log), a workspace
 * rule is appended to `.vox/permissions.json` — the same file users edit, so it is listed and
 * removable like theirs. The file is only written when it parses (a broken file is never
 * clobbered), its other keys are kept, it is confined like the reader (no symlinked `.vox` or
 * file) and replaced atomically (a temporary file renamed over it). A removal names the rule's
 * index and label, so a file edited meanwhile is never changed at the wrong entry.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { VoxStore } from '../store/store';
import type { AllowRuleJson } from './always-allow';
import { PermissionRulesError, WORKSPACE_RULES_FILE, parseRuleFile, MAX_RULES_PER_SOURCE, MAX_RULES_FILE_BYTES } from './rules';
import { VoxError } from '../../protocol/wire/vox-error';

/** A removal that names no rule there (gone, or the file changed meanwhile). */
export class UnknownRuleError extends VoxError<'permission'> {
  override readonly name = 'UnknownRuleError';
  readonly domain = 'permission' as const;
  constructor(message: string) {
    super('unknownRule', message);
  }
}

/** The label of a rule as JSON, the same text the permissions view shows. */
export function jsonRuleLabel(r: AllowRuleJson): string {
  return parseRuleFile(JSON.stringify({ rules: [r] })).rules[0]!.label;
}

/** A thread's own allow rules, as last set (empty when none). */
export function threadRuleJson(store: VoxStore, threadId: string): AllowRuleJson[] {
  const row = store.db.prepare("SELECT payload FROM events WHERE thread_id = ? AND type = 'thread.permissionRulesSet' ORDER BY seq DESC LIMIT 1").get(threadId) as { payload: string } | undefined;
  return row ? (JSON.parse(row.payload) as { rules: AllowRuleJson[] }).rules : [];
}

export function addThreadRule(store: VoxStore, threadId: string, rule: AllowRuleJson): void {
  store.getThread(threadId);
  const rules = threadRuleJson(store, threadId);
  if (rules.some((r) => jsonRuleLabel(r) === jsonRuleLabel(rule))) return;
  if (rules.length >= MAX_RULES_PER_SOURCE) throw new PermissionRulesError('invalidRules', `thread ${threadId}`, '$.rules', `more than ${MAX_RULES_PER_SOURCE} rules`);
  store.append({ type: 'thread.permissionRulesSet', threadId, rules: [...rules, rule] });
}

export function removeThreadRule(store: VoxStore, threadId: string, index: number, label: string): void {
  store.getThread(threadId);
  const rules = threadRuleJson(store, threadId);
  const at = rules[index];
  if (!at || jsonRuleLabel(at) !== label) throw new UnknownRuleError(`Thread ${threadId} has no rule ${index} "${label}" (it was removed or changed).`);
  store.append({ type: 'thread.permissionRulesSet', threadId, rules: rules.filter((_, i) => i !== index) });
}

/** The workspace file's JSON object now ({} when there is none), refusing a symlink or a file that does not parse. */
function readWorkspaceFile(root: string): Record<string, unknown> {
  const dir = path.join(root, '.vox');
  const refuse = (reason: string) => new PermissionRulesError('unreadableRules', WORKSPACE_RULES_FILE, '$', reason);
  let dirStat: fs.Stats | null = null;
  try {
    dirStat = fs.lstatSync(dir);
  } catch {
    fs.mkdirSync(dir);
    return {};
  }
  if (dirStat.isSymbolicLink() || !dirStat.isDirectory()) throw refuse('.vox is not a directory inside the workspace; the rule was not written');
  const file = path.join(root, WORKSPACE_RULES_FILE);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return {};
  }
  if (!st.isFile()) throw refuse('not a regular file (a symbolic link?); the rule was not written');
  if (st.size > MAX_RULES_FILE_BYTES) throw refuse(`larger than ${MAX_RULES_FILE_BYTES} bytes`);
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  let text: string;
  try {
    text = fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
  parseRuleFile(text); // typed error when it is broken: fix it first, it is never overwritten
  return JSON.parse(text) as Record<string, unknown>;
}

function writeWorkspaceFile(root: string, value: Record<string, unknown>): void {
  const file = path.join(root, WORKSPACE_RULES_FILE);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { flag: 'wx' });
  fs.renameSync(tmp, file);
}

export function addWorkspaceRule(root: string, rule: AllowRuleJson): void {
  const value = readWorkspaceFile(root);
  const rules = Array.isArray(value.rules) ? (value.rules as AllowRuleJson[]) : [];
  if (rules.some((r) => r.action === 'allow' && JSON.stringify(r) === JSON.stringify(rule))) return;
  if (rules.length >= MAX_RULES_PER_SOURCE) throw new PermissionRulesError('invalidRules', WORKSPACE_RULES_FILE, '$.rules', `more than ${MAX_RULES_PER_SOURCE} rules`);
  writeWorkspaceFile(root, { ...value, rules: [...rules, rule] });
}

export function removeWorkspaceRule(root: string, index: number, label: string): void {
  const value = readWorkspaceFile(root);
  const rules = Array.isArray(value.rules) ? value.rules : [];
  const parsed = parseRuleFile(JSON.stringify({ rules })).rules;
  if (!parsed[index] || parsed[index]!.label !== label) throw new UnknownRuleError(`${WORKSPACE_RULES_FILE} has no rule ${index} "${label}" (it was removed or edited).`);
  writeWorkspaceFile(root, { ...value, rules: rules.filter((_, i) => i !== index) });
}
