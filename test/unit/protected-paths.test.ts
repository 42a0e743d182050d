/**
 * Protected paths (src/engine/permissions/protected-paths.ts, decide.ts, service.ts): a write to
 * Vox's own configuration or to a file that makes the editor, git or the shell run code is asked
 * in every permission mode — Ask every time, Auto-approve edits, Full auto — with a reason that
 * says why; Plan mode still denies it, a deny rule still denies it, an allow rule does not cover
 * it. The service matches normalised paths in a real workspace (case, `./`, `..`, backslashes,
 * Windows' trailing dots, symlinks inside the workspace), adds the settings' list, and keeps a
 * turn's rules as they were at its start: the turn cannot widen them, a new deny applies at once.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalPolicy } from '../../src/engine/approvals/approval';
import { decidePermission, type CallSubject, type PermissionContext } from '../../src/engine/permissions/decide';
import { validateRuleSet, type PermissionMode } from '../../src/engine/permissions/rules';
import { PermissionService } from '../../src/engine/permissions/service';
import { VoxStore } from '../../src/engine/store/store';
import { TestHost } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const MODES: PermissionMode[] = ['ask', 'autoEdits', 'fullAuto'];
/** One file under every built-in protected entry. */
const PROTECTED = [
  '.vox/permissions.json', '.vox/rules/style.md', '.vox/mcp.json', '.vscode/settings.json', '.vscode/tasks.json', '.vscode/launch.json',
  '.vscode/mcp.json', '.mcp.json', '.claude/settings.json', '.claude/settings.local.json', '.git/hooks/pre-commit', 'sub/.git/config',
  '.husky/pre-commit', '.githooks/pre-push', '.envrc', 'pkg/.envrc',
];
const ORDINARY = ['sub/.vox/permissions.json', 'src/a.ts', '.vscode/extensions.json', 'docs/vox/permissions.json', '.claude/commands/x.md', 'voxfile', '.github/ci.yml'];

function ctx(mode: PermissionMode, rules: unknown[] = [], extra: Partial<PermissionContext> = {}): PermissionContext {
  return { mode, policy: new ApprovalPolicy(), rules: validateRuleSet({ rules }, 'settings', { allowMode: true }).rules, broken: null, planMode: false, ...extra };
}
const write = (p: string): CallSubject => ({ toolName: 'write_file', toolClass: 'write', args: { path: p, content: 'x' }, paths: [p] });
const edit = (p: string): CallSubject => ({ toolName: 'apply_edit', toolClass: 'write', args: { path: p, oldText: 'a', newText: 'b' }, paths: [p] });
const run = (command: string): CallSubject => ({ toolName: 'run_command', toolClass: 'execute', args: { command } });

describe('protected paths: the decision', () => {
  for (const mode of MODES) {
    it(`mode ${mode}: every protected path is asked, saying why; an ordinary path follows the mode`, () => {
      for (const p of PROTECTED) {
        for (const call of [write(p), edit(p)]) {
          const d = decidePermission(ctx(mode), call);
          assert.deepEqual([d.decision, d.source], ['ask', 'protected'], `${mode} ${call.toolName} ${p}`);
          assert.match(d.reason, /^Protected path: /, p);
          assert.match(d.reason, /asked in every mode/);
        }
      }
      for (const p of ORDINARY) {
        const d = decidePermission(ctx(mode), write(p));
        assert.equal(d.source, 'mode', p);
        assert.equal(d.decision, mode === 'ask' ? 'ask' : 'allow', p);
      }
    });
  }

  it('the reason names the path and why; a permission file says the change applies from the next turn', () => {
    const perm = decidePermission(ctx('fullAuto'), write('.vox/permissions.json'));
    assert.match(perm.reason, /^Protected path: \.vox\/permissions\.json — Vox's own configuration/);
    assert.match(perm.reason, /apply from the next turn/);
    const tasks = decidePermission(ctx('fullAuto'), write('.vscode/tasks.json'));
    assert.match(tasks.reason, /the editor runs code from it/);
    assert.doesNotMatch(tasks.reason, /next turn/);
  });

  it('Plan mode denies a protected write anyway; a deny rule still denies; allow rules do not cover it; reads are not protected', () => {
    assert.equal(decidePermission(ctx('fullAuto', [], { planMode: true }), write('.vox/permissions.json')).source, 'plan');
    const denied = decidePermission(ctx('fullAuto', [{ action: 'deny', tool: 'write', path: '.vscode/' }]), write('.vscode/tasks.json'));
    assert.deepEqual([denied.decision, denied.source], ['deny', 'rule']);
    for (const allow of [{ action: 'allow', tool: 'write_file', path: '**' }, { action: 'allow', tool: '*' }, { action: 'allow', tool: 'write' }, { action: 'allow', path: '.vox/' }]) {
      const d = decidePermission(ctx('fullAuto', [allow]), write('.vox/permissions.json'));
      assert.deepEqual([d.decision, d.source], ['ask', 'protected'], JSON.stringify(allow));
    }
    const read = decidePermission(ctx('ask'), { toolName: 'read_file', toolClass: 'read', args: { path: '.vox/permissions.json' }, paths: ['.vox/permissions.json'] });
    assert.equal(read.decision, 'allow');
  });

  it('a command writing a protected file by redirection is asked even in Full auto and under an allow rule', () => {
    const c = ctx('fullAuto', [{ action: 'allow', command: 'echo *' }]);
    for (const cmd of [`echo '{"rules":[]}' > .vox/permissions.json`, 'echo x >> ./.envrc', 'npm test && echo "{}" > .vscode/tasks.json']) {
      assert.deepEqual([decidePermission(c, run(cmd)).decision, decidePermission(c, run(cmd)).source], ['ask', 'protected'], cmd);
    }
    const inSub = decidePermission(c, { ...run('echo x > permissions.json'), args: { command: 'echo x > permissions.json', cwd: '.vox' } });
    assert.equal(inSub.source, 'protected', 'relative to the command\'s cwd');
    assert.equal(decidePermission(c, run('echo hi > out.txt')).decision, 'allow');
  });

  it('a command the parser cannot see through (a here-doc, $( )) that names a protected file is asked in Full auto', () => {
    for (const cmd of [`cat > .vox/permissions.json <<'EOF'\n{"rules":[]}\nEOF`, 'echo "$(cat x)" > ".vscode/tasks.json"', 'cp "$SRC" .envrc']) {
      const d = decidePermission(ctx('fullAuto'), run(cmd));
      assert.deepEqual([d.decision, d.source], ['ask', 'protected'], cmd);
    }
    assert.equal(decidePermission(ctx('fullAuto'), run('echo $(date) > out.txt')).decision, 'allow');
  });

  it('matching is normalised: case, ./, .., backslashes, Windows trailing dots and stream names', () => {
    for (const p of ['.VOX/permissions.json', './.vox/permissions.json', 'a/../.vox/permissions.json', '.vox\\permissions.json', 'src\\..\\.vscode\\TASKS.JSON',
      '.vox./permissions.json', '.vscode/tasks.json.', '.vscode/tasks.json::$DATA', '.Git/config', '.vox']) {
      assert.equal(decidePermission(ctx('fullAuto'), write(p)).source, 'protected', p);
    }
  });
});

describe('protected paths: the service in a workspace', () => {
  let dir: string;
  let store: VoxStore;
  let host: TestHost;
  let svc: PermissionService;
  const call = (p: string) => ({ toolName: 'write_file', toolClass: 'write' as const, args: { path: p, content: 'x' } });
  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
    store = VoxStore.open(path.join(dir, 'vox.db'));
    host = new TestHost();
    host.permissions = { mode: 'fullAuto' };
    svc = new PermissionService({ workspaceRoot: dir, host, store, policy: () => new ApprovalPolicy() });
    store.append({ type: 'thread.created', threadId: 'thread:t', title: 't' });
  });
  afterEach(() => {
    svc.dispose();
    store.close();
    removeTmpDir(dir);
  });

  it('asks for a protected path reached through a symlink inside the workspace, or spelled absolute or with backslashes', () => {
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.mkdirSync(path.join(dir, '.vscode'));
    fs.writeFileSync(path.join(dir, '.vscode/tasks.json'), '{}');
    fs.symlinkSync(path.join(dir, '.vox'), path.join(dir, 'cfg'));
    fs.symlinkSync(path.join(dir, '.vscode/tasks.json'), path.join(dir, 'tasks-link.json'));
    for (const p of ['cfg/permissions.json', 'cfg\\permissions.json', 'tasks-link.json', path.join(dir, '.vox/permissions.json'), 'cfg/../.envrc']) {
      const d = svc.decide('thread:t', call(p));
      assert.deepEqual([d.decision, d.source], ['ask', 'protected'], p);
    }
    assert.equal(svc.decide('thread:t', call('src/a.ts')).decision, 'allow');
    const redirect = svc.decide('thread:t', { toolName: 'run_command', toolClass: 'execute', args: { command: `echo x > ${path.join(dir, '.vox/permissions.json')}` } });
    assert.equal(redirect.source, 'protected', 'an absolute redirection target inside the workspace');
  });

  it('a dangling symlink is judged by where it leads: a protected path or a denied folder that does not exist yet', () => {
    // A cloned repository can ship such links; writing through one creates their target.
    fs.symlinkSync('.vscode/tasks.json', path.join(dir, 't.json'));
    fs.symlinkSync(path.join(dir, '.vox/permissions.json'), path.join(dir, 'p.json'));
    fs.symlinkSync('.github/workflows/ci.yml', path.join(dir, 'ci.yml'));
    fs.symlinkSync('t.json', path.join(dir, 'chain.json'));
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync('../.envrc', path.join(dir, 'sub/env'));
    for (const p of ['t.json', 'p.json', 'chain.json', 'sub/env']) {
      const d = svc.decide('thread:t', call(p));
      assert.deepEqual([d.decision, d.source], ['ask', 'protected'], p);
    }
    host.permissions = { mode: 'fullAuto', rules: [{ action: 'deny', tool: 'write', path: '.github/' }] };
    assert.equal(svc.decide('thread:t', call('ci.yml')).decision, 'deny');
    fs.symlinkSync('loop-b', path.join(dir, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(dir, 'loop-b'));
    assert.equal(svc.decide('thread:t', call('loop-a')).decision, 'allow', 'a link loop is the file tool\'s to refuse; the rules see its own path');
  });

  it('a deny rule on a directory also catches a path spelled with backslashes', () => {
    host.permissions = { mode: 'fullAuto', rules: [{ action: 'deny', tool: 'write', path: '.github/' }] };
    assert.equal(svc.decide('thread:t', call('.github\\workflows\\ci.yml')).decision, 'deny');
  });

  it('the settings add protected paths (never remove one); a malformed list is a typed error and every call is asked', () => {
    host.permissions = { mode: 'fullAuto', protectedPaths: ['deploy/**', 'Makefile'] };
    assert.equal(svc.decide('thread:t', call('deploy/prod.sh')).source, 'protected');
    assert.equal(svc.decide('thread:t', call('sub/makefile')).source, 'protected');
    assert.match(svc.decide('thread:t', call('Makefile')).reason, /listed in the protected paths setting/);
    assert.equal(svc.decide('thread:t', call('.vox/permissions.json')).source, 'protected', 'the built-ins stay');
    assert.deepEqual(svc.effective().protectedPaths.filter((p) => p.source === 'settings').map((p) => p.path), ['deploy/**', 'Makefile']);
    host.permissions = { mode: 'fullAuto', protectedPaths: ['../outside'] };
    const eff = svc.effective();
    assert.deepEqual(eff.errors.map((e) => [e.source, e.jsonPath]), [['settings (vox.protectedPaths)', '$[0]']]);
    assert.equal(svc.decide('thread:t', call('src/a.ts')).decision, 'ask', 'fail closed');
  });

  it("a turn keeps the rules it started with: the agent's widening applies from the next turn, a new deny at once", () => {
    host.permissions = { mode: 'autoEdits' };
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'allow', command: 'npm test' }] }));
    const cmd = (command: string) => ({ toolName: 'run_command', toolClass: 'execute' as const, args: { command } });
    assert.equal(svc.decide('thread:t', { ...cmd('ls'), runId: 'run:1' }).decision, 'ask', 'the turn starts: ls is asked');
    // The turn's approved write widens the file: allow every command.
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'allow', command: 'npm test' }, { action: 'allow', tool: 'run_command' }] }));
    assert.equal(svc.decide('thread:t', { ...cmd('ls'), runId: 'run:1' }).decision, 'ask', 'the same turn still asks');
    assert.equal(svc.decide('thread:t', { ...cmd('npm test'), runId: 'run:1' }).decision, 'allow', 'what the turn started with still holds');
    // Settings widened mid-turn (an approved edit of .vscode/settings.json) do not apply either.
    host.permissions = { mode: 'fullAuto' };
    assert.equal(svc.decide('thread:t', { ...cmd('ls'), runId: 'run:1' }).decision, 'ask', 'the settings mode is widened only from the next turn');
    // A narrowing applies at once.
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'deny', command: 'npm test' }, { action: 'allow', tool: 'run_command' }] }));
    assert.equal(svc.decide('thread:t', { ...cmd('npm test'), runId: 'run:1' }).decision, 'deny');
    svc.endTurn('run:1');
    assert.equal(svc.decide('thread:t', { ...cmd('ls'), runId: 'run:2' }).decision, 'allow', 'the next turn reads the new rules');
  });

  it("a subagent's turn keeps its parent's turn-start rules; a user's Always allow applies to a running turn at once", () => {
    host.permissions = { mode: 'autoEdits' };
    const cmd = (command: string, runId: string, threadId = 'thread:t') => svc.decide(threadId, { toolName: 'run_command', toolClass: 'execute', args: { command }, runId });
    svc.beginTurn('run:p', 'thread:t');
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'allow', tool: 'run_command' }] }));
    store.append({ type: 'thread.created', threadId: 'thread:child', title: 'sub', parentThreadId: 'thread:t', parentRunId: 'run:p' });
    svc.beginTurn('run:c', 'thread:child');
    assert.equal(cmd('ls', 'run:c', 'thread:child').decision, 'ask', 'the child cannot use what its parent\'s turn wrote');
    assert.equal(cmd('ls', 'run:p').decision, 'ask');
    svc.noteUserAllowRule({ action: 'allow', tool: 'run_command' });
    assert.equal(cmd('ls', 'run:p').decision, 'allow', 'the user added the same rule: it applies at once');
  });
});
