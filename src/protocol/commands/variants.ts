/**
 * Variant commands (SPEC 4.3): run one prompt as 1..4 variants in worktrees, list and watch them
 * (a `variants` update on every status or stats change), a variant's diff, adopt one into the
 * workspace (refused on conflict, nothing changed), discard one, cancel them.
 */
import { arrayOf, bool, int, literal, nullable, object, optional, str, type Infer } from '../wire/validators';
import { MAX_PROMPT_CHARS, modelRef, name, nonEmpty } from './common';
import { ack, defineCommand } from './define';
import { subscribed } from './threads';

/** Most variants one prompt may run as (SPEC 4.3: 1..4). */
export const MAX_VARIANTS = 4;

export const variantStatus = literal('creating', 'running', 'completed', 'failed', 'cancelled', 'adopted', 'discarded');
export const variantFileStat = object({
  path: str, status: str, additions: int, deletions: int, binary: bool, oldMode: nullable(str), newMode: nullable(str),
});
export const variantStats = object({ files: arrayOf(variantFileStat), additions: int, deletions: int });
export const variantView = object({
  index: int, model: str, worktreePath: str, threadId: str, runId: nullable(str), status: variantStatus,
  stats: variantStats, error: nullable(str), statsError: nullable(str),
});
export type VariantView = Infer<typeof variantView>;
export const variantPoolView = object({ poolId: str, prompt: str, base: str, adopted: nullable(int), variants: arrayOf(variantView) });
export type VariantPoolView = Infer<typeof variantPoolView>;

const target = { poolId: name, index: int };

export const variantCommands = {
  startVariants: defineCommand('startVariants', {
    summary: `Runs the prompt as 1..${MAX_VARIANTS} variants, one model each, each in its own worktree.`,
    requires: ['write', 'startThreads'],
    params: { prompt: nonEmpty(MAX_PROMPT_CHARS), models: arrayOf(modelRef), parentThreadId: optional(name) },
    result: variantPoolView,
  }),
  listVariants: defineCommand('listVariants', {
    readOnly: true,
    summary: 'The variant pools of this engine that still have variants.',
    requires: ['read'],
    params: {},
    result: object({ pools: arrayOf(variantPoolView) }),
  }),
  watchVariants: defineCommand('watchVariants', {
    readOnly: true,
    summary: 'A `variants` update (every pool) now and on every status or stats change.',
    requires: ['read'],
    params: {},
    result: subscribed,
  }),
  diffVariant: defineCommand('diffVariant', {
    readOnly: true,
    summary: 'A variant\'s changes against its base commit: per-file stats and the patch text.',
    requires: ['read'],
    params: target,
    result: object({ base: str, worktreePath: str, stats: variantStats, patch: str }),
  }),
  adoptVariant: defineCommand('adoptVariant', {
    summary: 'Applies a finished variant to the workspace as a patch (refused on conflict, files named), then removes every variant worktree.',
    requires: ['owner'],
    params: target,
    result: object({ index: int, files: arrayOf(variantFileStat), removalErrors: arrayOf(object({ index: int, message: str })) }),
  }),
  discardVariant: defineCommand('discardVariant', {
    summary: 'Stops a variant and removes its worktree.',
    requires: ['write'],
    params: target,
    result: ack,
  }),
  clearVariants: defineCommand('clearVariants', {
    summary: 'Clears a finished pool (no variant running): removes every remaining worktree and drops the pool from the list.',
    requires: ['write'],
    params: { poolId: name },
    result: object({ removed: arrayOf(int) }),
  }),
  cancelVariants: defineCommand('cancelVariants', {
    summary: 'Stops the agent loops of a pool (or of every pool); worktrees stay for inspection.',
    requires: ['write'],
    params: { poolId: optional(name) },
    result: ack,
  }),
};
