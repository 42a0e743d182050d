/**
 * Handler of `prepareModel` (../../../protocol/commands/prepare.ts): resolves the named model (or
 * the default) and lets its provider load what the first prompt would. A failure is answered as
 * `prepared: false` with the provider's message, not as an error: nothing was asked of the user
 * yet, and the first prompt reports the same failure where the user sees it.
 */
import { performance } from 'node:perf_hooks';
import { VoxError } from '../../../protocol/wire/vox-error';
import type { HandlerTable } from './types';

export const prepareHandlers: HandlerTable<'prepareModel'> = {
  async prepareModel({ services: { providers }, session }, cmd) {
    const ref = cmd.model ?? session.settings().model;
    const t0 = performance.now();
    const ms = (): number => Math.round(performance.now() - t0);
    try {
      const resolved = await providers.resolve(ref);
      const loaded = resolved.provider.prepare ? await resolved.provider.prepare(resolved.model) : false;
      return { model: ref, prepared: true, loaded, ms: ms(), reason: null };
    } catch (e) {
      const reason = e instanceof VoxError ? e.message : `Could not prepare ${ref}.`;
      return { model: ref, prepared: false, loaded: false, ms: ms(), reason };
    }
  },
};
