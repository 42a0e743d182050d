/** Handlers of the managed-worktree commands (../../../protocol/commands/worktrees.ts), on the workspace's repository. */
import * as path from 'node:path';
import { createManagedWorktree, listManagedWorktrees, removeManagedWorktree, type ManagedWorktree } from '../../worktrees/worktrees';
import type { WorktreeView } from '../../../protocol/commands/worktrees';
import type { HandlerTable } from './types';

function view(w: ManagedWorktree): WorktreeView {
  return {
    path: w.path, family: w.family, group: w.group, slug: w.slug, head: w.head, branch: w.branch, detached: w.detached,
    locked: w.locked, lockReason: w.lockReason, prunable: w.prunable, prunableReason: w.prunableReason,
  };
}

export const worktreeHandlers: HandlerTable<'createWorktree' | 'listWorktrees' | 'removeWorktree'> = {
  async createWorktree({ services: { workspaceRoot } }, cmd) {
    const wt = await createManagedWorktree({
      repoRoot: workspaceRoot, slug: cmd.slug,
      ...(cmd.base !== undefined ? { baseRef: cmd.base } : {}),
      ...(cmd.branch !== undefined ? { branch: cmd.branch, detach: false } : {}),
    });
    return { worktree: view(wt), env: wt.env };
  },
  async listWorktrees({ services: { workspaceRoot } }) {
    return { worktrees: (await listManagedWorktrees(workspaceRoot)).map(view) };
  },
  async removeWorktree({ services: { workspaceRoot } }, cmd) {
    const r = await removeManagedWorktree({ repoRoot: workspaceRoot, path: path.resolve(workspaceRoot, cmd.path), force: cmd.force === true });
    return { path: r.path, treeDeleted: r.treeDeleted, linksUnlinked: r.linksUnlinked };
  },
};
