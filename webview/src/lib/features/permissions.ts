/**
 * Permission modes: the open thread's own mode (thread.permissionModeSet; null follows the
 * workspace), the workspace's mode and rules (`getPermissions`, asked again for a new engine
 * session once loaded), and setting either.
 */
import { defineFeature } from './feature';

export const permissionsFeature = defineFeature({
  name: 'permissions',
  events: {
    'thread.permissionModeSet'(s, ev) {
      s.permissionMode = ev.mode;
    },
  },
  install(ctx) {
    const m = ctx.model;
    const intents = {
      /** The workspace's permission mode and rules. */
      loadPermissions(): void {
        ctx.send({ type: 'getPermissions' });
      },
      /** The open thread's own permission mode (null: follow the workspace), or the workspace default without a thread. */
      setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto' | null, scope: 'thread' | 'workspace' = m.thread ? 'thread' : 'workspace'): void {
        const thread = m.thread;
        if (scope === 'thread' && thread) ctx.send({ type: 'setPermissionMode', scope, threadId: thread.threadId, mode });
        else if (mode !== null) ctx.send({ type: 'setPermissionMode', scope: 'workspace', mode }, { scopeWorkspace: true });
      },
    };
    return {
      intents,
      results: {
        getPermissions(value) {
          m.permissions = value;
        },
        setPermissionMode(value, req) {
          if (req.scopeWorkspace) m.permissions = value;
        },
      },
      reconnected() {
        if (m.permissions !== undefined) intents.loadPermissions(); // the permission settings may have changed too
      },
    };
  },
});
