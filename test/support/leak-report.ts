/**
 * Root hook (loaded by .mocharc): after the last test, names the child processes whose handles
 * are still open in the mocha process — a test that spawned one and never waited for its end.
 * CI runs mocha with `--exit` (scripts/test-all.mjs) so such a leak cannot hang the run; this
 * report keeps it visible instead of hidden (the count goes to stderr, the run is not failed).
 */
interface HandleLike { constructor?: { name?: string }; spawnfile?: string; spawnargs?: string[]; pid?: number; exitCode?: number | null }

export const mochaHooks = {
  afterAll(): void {
    const handles = (process as unknown as { _getActiveHandles?: () => HandleLike[] })._getActiveHandles?.() ?? [];
    const children = handles.filter((h) => h.constructor?.name === 'ChildProcess');
    if (children.length === 0) return;
    process.stderr.write(`leak report: ${children.length} child process handle(s) still open after the tests:\n`);
    for (const c of children) process.stderr.write(`  pid ${c.pid} exit ${c.exitCode} ${[c.spawnfile, ...(c.spawnargs ?? []).slice(1)].join(' ').slice(0, 300)}\n`);
  },
};
