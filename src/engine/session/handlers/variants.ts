/** Handlers of the variant commands (../../../protocol/commands/variants.ts). */
import type { VariantPoolView } from '../../../protocol/commands/variants';
import { VariantError } from '../../variants/types';
import type { VariantGroup } from '../../variants/group';
import type { VariantPool } from '../../variants/pool';
import type { HandlerTable } from './types';

type VariantCommand = 'startVariants' | 'listVariants' | 'watchVariants' | 'diffVariant' | 'adoptVariant' | 'discardVariant' | 'clearVariants' | 'cancelVariants';

export function poolView(g: VariantGroup): VariantPoolView {
  return { poolId: g.poolId, prompt: g.prompt, base: g.base, adopted: g.adopted, variants: g.variants };
}

function group(variants: VariantPool, poolId: string): VariantGroup {
  const g = variants.get(poolId);
  if (!g) throw new VariantError('unknownPool', `there is no variant pool ${poolId} in this engine (it ended, or ran in another window)`);
  return g;
}

export const variantHandlers: HandlerTable<VariantCommand> = {
  async startVariants({ services: { variants, workspaceRoot } }, cmd) {
    const g = await variants.startVariants({ repoRoot: workspaceRoot, prompt: cmd.prompt, models: cmd.models, ...(cmd.parentThreadId ? { parentThreadId: cmd.parentThreadId } : {}) });
    return poolView(g);
  },
  listVariants({ services: { variants } }) {
    return { pools: variants.list().map(poolView) };
  },
  watchVariants({ services: { variants }, session }) {
    const target = 'variants';
    const push = () => session.send({ type: 'variants', pools: variants.list().map(poolView) });
    session.addSubscription(target, variants.onDidChange(push));
    push();
    return { target };
  },
  async diffVariant({ services: { variants } }, cmd) {
    const g = group(variants, cmd.poolId);
    const d = await g.diffVariant(cmd.index);
    return { base: d.base, worktreePath: g.variant(cmd.index).worktreePath, stats: d.stats, patch: d.text };
  },
  async adoptVariant({ services: { variants } }, cmd) {
    const r = await group(variants, cmd.poolId).adoptVariant(cmd.index);
    return { index: r.index, files: r.files, removalErrors: r.removalErrors };
  },
  async discardVariant({ services: { variants } }, cmd) {
    await group(variants, cmd.poolId).discardVariant(cmd.index);
    return {};
  },
  async clearVariants({ services: { variants } }, cmd) {
    return { removed: await group(variants, cmd.poolId).clear() };
  },
  async cancelVariants({ services: { variants } }, cmd) {
    if (cmd.poolId !== undefined) await group(variants, cmd.poolId).cancelAll();
    else await variants.cancelAll();
    return {};
  },
};
