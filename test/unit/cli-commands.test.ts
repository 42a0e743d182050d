/**
 * The `vox` command tree: every command that does something takes `--json` and has a help text
 * that names its options; groups (checkpoint, worktree, variants) list their subcommands. Walks
 * the real commander program, so a new command without `--json` fails here.
 */
import { strict as assert } from 'node:assert';
import type { Command } from 'commander';
import { buildProgram, errorLabel } from '../../src/cli/main';

function leaves(c: Command, trail: string[] = []): Array<{ path: string; cmd: Command }> {
  const subs = c.commands.filter((s) => s.name() !== 'help');
  if (subs.length === 0) return [{ path: trail.join(' '), cmd: c }];
  return subs.flatMap((s) => leaves(s, [...trail, s.name()]));
}

describe('vox CLI: the command tree', () => {
  const program = buildProgram(() => undefined);
  const all = leaves(program);

  it('has the commands the README documents', () => {
    const paths = all.map((l) => l.path);
    for (const p of ['chat', 'threads', 'show', 'model', 'checkpoint capture', 'checkpoint list', 'checkpoint diff', 'checkpoint restore', 'checkpoint undo', 'checkpoint prune', 'worktree create', 'worktree list', 'worktree remove', 'variants run']) {
      assert.ok(paths.includes(p), `missing: vox ${p} (have: ${paths.join(', ')})`);
    }
  });

  for (const { path, cmd } of leaves(buildProgram(() => undefined))) {
    it(`vox ${path}: --json and a help text that names its options`, () => {
      assert.ok(cmd.options.some((o) => o.long === '--json'), `vox ${path} has no --json`);
      const help = cmd.helpInformation();
      assert.match(help, /--json/);
      assert.match(help, /-h, --help/);
      assert.ok(cmd.description().length > 0, `vox ${path} has no description`);
    });
  }

  it('typed errors print as <Domain>Error (<code>)', () => {
    assert.equal(errorLabel('store', 'notSqlite'), 'StoreError (notSqlite)');
    assert.equal(errorLabel('run', 'threadBusy'), 'RunError (threadBusy)');
  });
});
