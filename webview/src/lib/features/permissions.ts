/**
 * Permission modes: the open thread's own mode (thread.permissionModeSet; null follows the
 * workspace), the next new thread's (kept here and sent with its first prompt, so the engine
 * applies it before that thread's first tool call), the workspace's mode and rules
 * (`getPermissions`, asked again for a new engine session once loaded), and making a mode the
 * default — an explicit, separate action that writes the workspace's or the user's settings.
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
      /** The open thread's own permission mode, or the next new thread's (null: follow the workspace default); never a setting. */
      setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto' | null): void {
        const thread = m.thread;
        if (thread) ctx.send({ type: 'setPermissionMode', scope: 'thread', threadId: thread.threadId, mode });
        else m.nextPermissionMode = mode;
      },
      /** Makes a mode the default: `workspace` writes the workspace's settings (.vscode/settings.json), `user` the user's. */
      setDefaultPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto', target: 'workspace' | 'user'): void {
        ctx.send({ type: 'setPermissionMode', scope: target, mode }, { scopeWorkspace: true });
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
