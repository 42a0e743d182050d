/** Handlers of the bundle commands (../../../protocol/commands/bundles.ts): export and import one JSON bundle (../../bundles/). */
import { exportBundle } from '../../bundles/export';
import { importBundle } from '../../bundles/import';
import type { HandlerTable } from './types';

type BundleCommand = 'exportBundle' | 'importBundle';

export const bundleHandlers: HandlerTable<BundleCommand> = {
  exportBundle: ({ services: { store, host, workspaceRoot } }, cmd) => exportBundle({ store, host, workspaceRoot }, cmd.path, cmd.threadIds),
  importBundle: ({ services: { store, host, workspaceRoot } }, cmd) => importBundle({ store, host, workspaceRoot }, cmd.path),
};
