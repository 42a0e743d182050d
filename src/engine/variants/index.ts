/**
 * Variants (SPEC §4.3): run one prompt as 1..4 variants in parallel, each in its own
 * managed worktree with its own model; live per-variant diff stats; adopt one into the main
 * workspace as a patch (refused on conflict, nothing changed); the others are removed.
 * This module re-exports the whole API.
 */
export * from './types';
export { VariantPool, variantLocation, type VariantPoolDeps, type StartVariantsOptions } from './pool';
export { VariantGroup, type VariantRunnerDeps, type VariantPlan } from './group';
export { snapshotVariant, parseRawNumstat, sameStats, type SnapshotOptions, type VariantSnapshot } from './diff';
export { applyToWorkspace, pathsNamedIn } from './apply';
