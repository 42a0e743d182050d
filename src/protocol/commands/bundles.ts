/**
 * Bundle commands (SPEC 6.6): export threads (every branch, message, run and
 * item, with their postures), the workspace's and the user's rules and the threads' checkpoint ref
 * names to one versioned JSON file, and import such a file, merging without duplicates. The
 * engine reads and writes the file itself (a path on the engine's machine), so both are `owner`.
 */
import { arrayOf, int, object, optional, refine, str, type Infer } from '../wire/validators';
import { name } from './common';
import { defineCommand } from './define';

/** Most threads named by one export's filter. */
export const MAX_BUNDLE_THREAD_FILTER = 1_000;
/** Longest bundle path a client may send. */
export const MAX_BUNDLE_PATH_CHARS = 4_096;

const bundlePath = refine(str, (s) => s.length > 0 && s.length <= MAX_BUNDLE_PATH_CHARS && !s.includes('\0'), `a file path of 1..${MAX_BUNDLE_PATH_CHARS} characters`);

export const bundleExportView = object({
  /** The file written (absolute). */
  path: str,
  /** The bundle format version written. */
  version: int,
  threads: int, messages: int, runs: int, items: int, events: int,
  /** Workspace rule files and user rules (settings) in the bundle. */
  workspaceRules: int, userRules: int,
  /** Checkpoint ref names listed (the git objects stay in the repository). */
  checkpointRefs: int,
  bytes: int,
});
export type BundleExportView = Infer<typeof bundleExportView>;

export const bundleImportView = object({
  path: str,
  version: int,
  /** Threads new to this install, threads that gained events, threads already complete here. */
  threadsAdded: int, threadsMerged: int, threadsUnchanged: int,
  /** Threads of the bundle deleted here: left deleted, nothing merged. */
  threadsSkipped: arrayOf(str),
  events: int, messages: int, runs: int,
  /** Workspace rule files written, identical ones, and names kept as they are here because they differ. */
  workspaceRules: object({ added: int, unchanged: int, conflicts: arrayOf(str) }),
  /** User rules (settings) added by name; names present here are kept; `unsupported`: this host keeps none. */
  userRules: object({ added: int, unchanged: int, conflicts: arrayOf(str), unsupported: int }),
  /** Checkpoint ref names the bundle lists (not restorable here unless the repository has them). */
  checkpointRefs: int,
});
export type BundleImportView = Infer<typeof bundleImportView>;

export const bundleCommands = {
  exportBundle: defineCommand('exportBundle', {
    readOnly: true,
    summary: 'Writes threads (all, or `threadIds` and their subagent threads) with every branch, message, run and item, the rules (.vox/rules and settings) and checkpoint ref names to one versioned JSON file.',
    requires: ['owner'],
    params: { path: bundlePath, threadIds: optional(refine(arrayOf(name), (l) => l.length <= MAX_BUNDLE_THREAD_FILTER, `at most ${MAX_BUNDLE_THREAD_FILTER} thread ids`)) },
    result: bundleExportView,
  }),
  importBundle: defineCommand('importBundle', {
    summary: 'Merges a bundle file into this install without duplicates (ids are kept; importing twice changes nothing; a thread with more messages gains them); all or nothing. A newer format version is refused.',
    requires: ['owner'],
    params: { path: bundlePath },
    result: bundleImportView,
  }),
};
