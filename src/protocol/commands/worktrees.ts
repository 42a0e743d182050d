/** Managed worktree commands (SPEC 4.1): create (with the repository's .env files), list, remove (link-safe). */
import { arrayOf, bool, int, nullable, object, optional, str, type Infer } from '../wire/validators';
import { name } from './common';
import { defineCommand } from './define';

export const worktreeView = object({
  path: str, family: str, group: str, slug: str, head: nullable(str), branch: nullable(str), detached: bool,
  locked: bool, lockReason: nullable(str), prunable: bool, prunableReason: nullable(str),
});
export type WorktreeView = Infer<typeof worktreeView>;

export const envReport = object({ copied: arrayOf(str), skipped: arrayOf(object({ path: str, reason: str, message: optional(str) })) });

export const worktreeCommands = {
  createWorktree: defineCommand('createWorktree', {
    summary: 'Creates a managed worktree under .vox/worktrees/<repo>/<slug> (detached at `base`, or on a new `branch`).',
    requires: ['owner'],
    params: { slug: name, base: optional(name), branch: optional(name) },
    result: object({ worktree: worktreeView, env: nullable(envReport) }),
  }),
  listWorktrees: defineCommand('listWorktrees', {
    readOnly: true,
    summary: 'The managed worktrees of the workspace\'s repository.',
    requires: ['read'],
    params: {},
    result: object({ worktrees: arrayOf(worktreeView) }),
  }),
  removeWorktree: defineCommand('removeWorktree', {
    summary: 'Removes a managed worktree (refused when dirty unless `force`; symbolic links are never followed).',
    requires: ['owner'],
    params: { path: name, force: optional(bool) },
    result: object({ path: str, treeDeleted: bool, linksUnlinked: int }),
  }),
};
