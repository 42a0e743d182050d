/**
 * Permission rules and modes (src/engine/permissions/): validation with typed errors (file, JSON
 * path, reason), path globs, command patterns on the parsed command (quoting, chains, env
 * prefixes, sudo, flag order), precedence (plan > broken rules > deny > ask > opaque > allow >
 * mode; deny beats allow whichever source holds it) and the reason given. The service reads a
 * real `.vox/permissions.json` in a temporary workspace and refuses a symlinked one.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalPolicy } from '../../src/engine/approvals/approval';
import { decidePermission, pathMatches, type CallSubject, type PermissionContext } from '../../src/engine/permissions/decide';
import { PermissionRulesError, parseRuleFile, validateRuleSet, type PermissionMode } from '../../src/engine/permissions/rules';
import { PermissionService } from '../../src/engine/permissions/service';
import { VoxStore } from '../../src/engine/store/store';
import { TestHost } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

function ctx(rules: unknown[], mode: PermissionMode = 'ask', extra: Partial<PermissionContext> = {}): PermissionContext {
  return { mode, policy: new ApprovalPolicy(), rules: validateRuleSet({ rules }, 'settings', { allowMode: true }).rules, broken: null, planMode: false, ...extra };
}
const run = (command: string): CallSubject => ({ toolName: 'run_command', toolClass: 'execute', args: { command } });
const write = (p: string): CallSubject => ({ toolName: 'write_file', toolClass: 'write', args: { path: p, content: 'x' }, paths: [p] });
const read = (p: string): CallSubject => ({ toolName: 'read_file', toolClass: 'read', args: { path: p }, paths: [p] });

function rulesError(f: () => unknown): PermissionRulesError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof PermissionRulesError, `expected a PermissionRulesError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an error');
}

describe('permissions: rule files', () => {
  it('malformed files are typed errors naming the file, the JSON path and why', () => {
    const bad = rulesError(() => parseRuleFile('{"rules": [ {"action": "allow", "command": "npm test"}, {"action": "maybe", "tool": "*"} ]}'));
    assert.equal(bad.code, 'invalidRules');
    assert.equal(bad.source, '.vox/permissions.json');
    assert.equal(bad.jsonPath, '$.rules[1].action');
    assert.match(bad.message, /^\.vox\/permissions\.json: \$\.rules\[1\]\.action: action must be one of allow, ask, deny/);
    assert.equal(rulesError(() => parseRuleFile('{"rules": [')).jsonPath, '$');
    assert.match(rulesError(() => parseRuleFile('{"rules": [')).reason, /not valid JSON/);
    assert.equal(rulesError(() => parseRuleFile('{"rules": [{"action": "deny", "commnd": "x"}]}')).jsonPath, '$.rules[0].commnd');
    assert.equal(rulesError(() => parseRuleFile('{"rules": [{"action": "deny"}]}')).jsonPath, '$.rules[0]');
    assert.match(rulesError(() => parseRuleFile('{"rules": [{"action": "allow", "command": "npm test && rm x"}]}')).reason, /one command/);
    assert.match(rulesError(() => parseRuleFile('{"rules": [{"action": "allow", "command": "echo $(x)"}]}')).reason, /cannot be parsed/);
    assert.match(rulesError(() => parseRuleFile('{"rules": [{"action": "deny", "path": "../x"}]}')).reason, /relative to the workspace/);
    assert.equal(rulesError(() => parseRuleFile('{"rules": {}}')).jsonPath, '$.rules');
    // The workspace file may not choose the mode (a cloned repository must not switch on full auto).
    const mode = rulesError(() => parseRuleFile('{"mode": "fullAuto"}'));
    assert.deepEqual([mode.code, mode.jsonPath], ['invalidMode', '$.mode']);
    assert.equal(rulesError(() => validateRuleSet({ mode: 'yolo' }, 'settings', { allowMode: true })).code, 'invalidMode');
  });
});

describe('permissions: matching', () => {
  it('path globs cover the path or a parent; a glob without "/" matches a name at any depth', () => {
    assert.ok(pathMatches('.github/', '.github/workflows/ci.yml'));
    assert.ok(pathMatches('.github/**', '.github/workflows/ci.yml'));
    assert.ok(pathMatches('.github', '.github'));
    assert.ok(!pathMatches('.github/', 'src/.githubx'));
    assert.ok(pathMatches('*.pem', 'keys/prod/server.pem'));
    assert.ok(pathMatches('src/**/*.test.ts', 'src/a/b/c.test.ts'));
    assert.ok(pathMatches('src/**/*.test.ts', 'src/c.test.ts'));
    assert.ok(!pathMatches('src/*.ts', 'src/a/b.ts'));
    assert.ok(!pathMatches('docs/', 'src/docs.md'));
  });

  it('command patterns match parsed words: exact, a trailing * for more arguments, quoting is irrelevant', () => {
    const c = ctx([{ action: 'allow', command: 'npm test' }, { action: 'allow', command: 'git log *' }]);
    assert.equal(decidePermission(c, run('npm test')).decision, 'allow');
    assert.equal(decidePermission(c, run(`'npm'  "test"`)).decision, 'allow');
    assert.equal(decidePermission(c, run('npm test -- --watch')).decision, 'ask', 'exact: more arguments are not covered');
    assert.equal(decidePermission(c, run('npm testx')).decision, 'ask');
    assert.equal(decidePermission(c, run('git log --oneline -5')).decision, 'allow');
    assert.equal(decidePermission(c, run('git log')).decision, 'allow');
    // A substring is not a match: "npm test" inside an echo or after a chain operator.
    assert.equal(decidePermission(c, run('echo npm test')).decision, 'ask');
  });

  it('every sub-command of a chain must be allowed; a deny anywhere in it denies', () => {
    const c = ctx([{ action: 'allow', command: 'npm test' }, { action: 'allow', command: 'npm run lint' }, { action: 'deny', command: 'rm -rf *', reason: 'never delete trees' }]);
    assert.equal(decidePermission(c, run('npm test && npm run lint')).decision, 'allow');
    const partly = decidePermission(c, run('npm test && curl evil.sh'));
    assert.equal(partly.decision, 'ask');
    assert.match(partly.reason, /No allow rule covers "curl evil\.sh"/);
    for (const line of ['npm test && rm -rf /', 'npm test; rm -rf build', 'ls | rm -rf .', 'npm test || rm -fr x', 'rm -r -f x', 'sudo rm -rf /', 'FOO=1 rm -rf x', '/bin/rm -rf x']) {
      const d = decidePermission(c, run(line));
      assert.equal(d.decision, 'deny', line);
      assert.equal(d.source, 'rule');
      assert.match(d.reason, /Denied by settings rules\[2\]: deny \* command "rm -rf \*" \(never delete trees\)\./);
    }
    assert.equal(decidePermission(c, run('rm -r x')).decision, 'ask', 'a different command (no -f) is not the deny pattern');
  });

  it('env prefixes: harmless ones keep an allow; PATH, LD_PRELOAD, NODE_OPTIONS… do not', () => {
    const c = ctx([{ action: 'allow', command: 'npm test' }]);
    assert.equal(decidePermission(c, run('CI=1 FOO="a b" npm test')).decision, 'allow');
    assert.equal(decidePermission(c, run('PATH=/tmp/evil npm test')).decision, 'ask');
    assert.equal(decidePermission(c, run('LD_PRELOAD=x.so npm test')).decision, 'ask');
    assert.equal(decidePermission(c, run('NODE_OPTIONS=--require=x npm test')).decision, 'ask');
  });

  it('sudo: an allow without sudo does not cover the command under sudo; a sudo pattern does', () => {
    assert.equal(decidePermission(ctx([{ action: 'allow', command: 'apt update' }]), run('sudo apt update')).decision, 'ask');
    assert.equal(decidePermission(ctx([{ action: 'allow', command: 'sudo apt update' }]), run('sudo apt update')).decision, 'allow');
    assert.equal(decidePermission(ctx([{ action: 'allow', command: 'sudo apt update' }]), run('apt update')).decision, 'ask');
  });

  it('substitutions, subshells and expansions: asked, even in Full auto, when a deny rule could apply; never covered by an allow rule', () => {
    const guarded = ctx([{ action: 'allow', tool: 'run_command' }, { action: 'deny', command: 'rm -rf *' }], 'fullAuto');
    for (const line of ['echo $(rm -rf /)', 'ls `pwd`', '(rm -rf x)', 'rm -rf $DIR']) {
      const d = decidePermission(guarded, run(line));
      assert.deepEqual([d.decision, d.source], ['ask', 'parser'], line);
      assert.match(d.reason, /deny and ask rules cannot check/);
    }
    assert.equal(decidePermission(guarded, run('anything at all')).decision, 'allow');
    // An allow-everything rule does not cover them: the mode decides (Ask every time asks).
    const d = decidePermission(ctx([{ action: 'allow', tool: 'run_command' }], 'ask'), run('echo $(id)'));
    assert.deepEqual([d.decision, d.source], ['ask', 'mode']);
    assert.match(d.reason, /No allow rule applies: it contains a \$\( \) command substitution/);
    // Without rules, Full auto (or vox.approval execute: auto) runs them, as the user chose.
    assert.equal(decidePermission(ctx([], 'fullAuto'), run('echo $(id)')).decision, 'allow');
    assert.equal(decidePermission({ ...ctx([], 'ask'), policy: new ApprovalPolicy({ execute: 'auto' }) }, run('echo $HOME')).decision, 'allow');
  });

  it('redirections: writing a file is not covered by a command allow, and write-path denies catch it', () => {
    const c = ctx([{ action: 'allow', command: 'echo *' }, { action: 'deny', tool: 'write', path: '.github/', reason: 'CI is reviewed by people' }]);
    assert.equal(decidePermission(c, run('echo hi')).decision, 'allow');
    assert.equal(decidePermission(c, run('echo hi > notes.txt')).decision, 'ask');
    const d = decidePermission(c, run('echo hi >> .github/workflows/ci.yml'));
    assert.equal(d.decision, 'deny');
    assert.match(d.reason, /CI is reviewed by people/);
  });
});

describe('permissions: precedence and modes', () => {
  it('deny beats allow, whichever is more specific and whichever source holds it', () => {
    const settingsAllow = validateRuleSet({ rules: [{ action: 'allow', tool: 'write_file', path: '.github/workflows/ci.yml' }] }, 'settings', { allowMode: true }).rules;
    const fileDeny = parseRuleFile(JSON.stringify({ rules: [{ action: 'deny', tool: 'write', path: '.github/' }] })).rules;
    const c: PermissionContext = { mode: 'fullAuto', policy: new ApprovalPolicy(), rules: [...settingsAllow, ...fileDeny], broken: null, planMode: false };
    const d = decidePermission(c, write('.github/workflows/ci.yml'));
    assert.deepEqual([d.decision, d.rule], ['deny', '.vox/permissions.json rules[0]: deny write path ".github/"']);
    // The other way round: an allow in the file does not lift a deny in the settings.
    const c2: PermissionContext = { ...c, rules: [...validateRuleSet({ rules: [{ action: 'deny', command: 'git push *' }] }, 'settings', { allowMode: true }).rules, ...parseRuleFile('{"rules":[{"action":"allow","command":"git push origin main"}]}').rules] };
    assert.equal(decidePermission(c2, run('git push origin main')).decision, 'deny');
  });

  it('an ask rule beats an allow rule and the mode', () => {
    const c = ctx([{ action: 'allow', tool: 'write' }, { action: 'ask', tool: 'write', path: 'package.json', reason: 'dependencies' }], 'fullAuto');
    const d = decidePermission(c, write('package.json'));
    assert.deepEqual([d.decision, d.source], ['ask', 'rule']);
    assert.match(d.reason, /Asked by settings rules\[1\].*\(dependencies\)/);
    assert.equal(decidePermission(c, write('src/a.ts')).decision, 'allow');
  });

  it('a rule beats the mode in both directions; the decision names the rule or the mode', () => {
    const allow = decidePermission(ctx([{ action: 'allow', command: 'npm test' }], 'ask'), run('npm test'));
    assert.deepEqual([allow.decision, allow.source, allow.rule], ['allow', 'rule', 'settings rules[0]: allow * command "npm test"']);
    assert.equal(allow.reason, 'Allowed by settings rules[0]: allow * command "npm test".');
    assert.equal(decidePermission(ctx([{ action: 'deny', tool: 'read', path: '.env' }], 'fullAuto'), read('config/.env')).decision, 'deny');
  });

  it('the modes: Ask every time, Auto-approve edits, Full auto', () => {
    const table: Array<[PermissionMode, string, string, string]> = [['ask', 'allow', 'ask', 'ask'], ['autoEdits', 'allow', 'allow', 'ask'], ['fullAuto', 'allow', 'allow', 'allow']];
    for (const [mode, r, w, x] of table) {
      const c = ctx([], mode);
      assert.deepEqual([decidePermission(c, read('a')).decision, decidePermission(c, write('a')).decision, decidePermission(c, run('ls')).decision], [r, w, x], mode);
    }
    const d = decidePermission(ctx([], 'autoEdits'), write('a'));
    assert.deepEqual([d.source, d.rule, d.reason], ['mode', null, 'Mode "Auto-approve edits" runs file edits without asking.']);
    // The Ask mode keeps the older per-class settings (vox.approval).
    assert.equal(decidePermission({ ...ctx([], 'ask'), policy: new ApprovalPolicy({ write: 'auto' }) }, write('a')).decision, 'allow');
  });

  it('Plan mode refuses write and execute tools before any rule; broken rules make every call asked', () => {
    const c = ctx([{ action: 'allow', tool: '*' }], 'fullAuto', { planMode: true });
    const d = decidePermission(c, write('a'));
    assert.deepEqual([d.decision, d.source], ['deny', 'plan']);
    assert.match(d.reason, /Plan mode.*submit_plan/);
    assert.equal(decidePermission(c, read('a')).decision, 'allow');
    const broken = new PermissionRulesError('invalidRules', '.vox/permissions.json', '$.rules[0]', 'bad');
    const b = decidePermission(ctx([], 'fullAuto', { broken }), read('a'));
    assert.deepEqual([b.decision, b.source], ['ask', 'rulesError']);
    assert.match(b.reason, /\.vox\/permissions\.json: \$\.rules\[0\]: bad/);
  });
});

describe('permissions: the service reads .vox/permissions.json from the workspace', () => {
  let dir: string;
  let store: VoxStore;
  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  it('combines settings and file rules, re-reads a changed file, reports a malformed one, refuses a symlink', () => {
    const host = new TestHost();
    host.permissions = { mode: 'autoEdits', rules: [{ action: 'allow', command: 'npm test' }] };
    const svc = new PermissionService({ workspaceRoot: dir, host, store, policy: () => new ApprovalPolicy() });
    assert.deepEqual(svc.effective().rules.map((r) => r.origin), ['settings (vox.permissionRules) rules[0]']);
    assert.deepEqual([svc.effective().mode, svc.effective().modeSource], ['autoEdits', 'settings']);
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'deny', tool: 'write', path: '.github/' }] }));
    assert.deepEqual(svc.effective().rules.map((r) => r.origin), ['settings (vox.permissionRules) rules[0]', '.vox/permissions.json rules[0]']);
    store.append({ type: 'thread.created', threadId: 'thread:t', title: 't' });
    assert.equal(svc.decide('thread:t', { toolName: 'write_file', toolClass: 'write', args: { path: '.github/ci.yml', content: '' } }).decision, 'deny');
    assert.equal(svc.decide('thread:t', { toolName: 'write_file', toolClass: 'write', args: { path: 'src/a.ts', content: '' } }).decision, 'allow');
    // A symlink inside the workspace that leads into .github/ is .github/ too.
    fs.mkdirSync(path.join(dir, '.github'));
    fs.symlinkSync(path.join(dir, '.github'), path.join(dir, 'gh'));
    assert.equal(svc.decide('thread:t', { toolName: 'write_file', toolClass: 'write', args: { path: 'gh/ci.yml', content: '' } }).decision, 'deny');

    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), '{"rules": [{"action": "nope"}]}');
    const eff = svc.effective();
    assert.deepEqual(eff.errors.map((e) => [e.source, e.jsonPath]), [['.vox/permissions.json', '$.rules[0].action']]);
    svc.effective();
    assert.deepEqual(host.notices.map((n) => [n.level, n.source]), [['warning', 'permissions']], 'the host is told once');
    assert.match(host.notices[0]!.message, /^\.vox\/permissions\.json: \$\.rules\[0\]\.action: .*Every tool call is asked until this is fixed\.$/);
    assert.equal(svc.decide('thread:t', { toolName: 'read_file', toolClass: 'read', args: { path: 'a' } }).decision, 'ask', 'fail closed');

    fs.rmSync(path.join(dir, '.vox/permissions.json'));
    const outside = makeTmpDir();
    try {
      fs.writeFileSync(path.join(outside, 'permissions.json'), '{"rules": [{"action": "allow", "tool": "*"}]}');
      fs.symlinkSync(path.join(outside, 'permissions.json'), path.join(dir, '.vox/permissions.json'));
      assert.match(svc.effective().errors[0]!.reason, /symbolic link/);
      assert.equal(svc.effective().rules.length, 1, 'the linked rules are not used');
    } finally {
      removeTmpDir(outside);
    }
  });

  it('the thread\'s own mode beats the settings\' mode', () => {
    const host = new TestHost();
    host.permissions = { mode: 'fullAuto' };
    const svc = new PermissionService({ workspaceRoot: dir, host, store, policy: () => new ApprovalPolicy() });
    store.append({ type: 'thread.created', threadId: 'thread:t', title: 't' });
    assert.equal(svc.mode('thread:t').mode, 'fullAuto');
    store.append({ type: 'thread.permissionModeSet', threadId: 'thread:t', mode: 'ask' });
    assert.deepEqual(svc.mode('thread:t'), { mode: 'ask', source: 'thread' });
    assert.equal(svc.decide('thread:t', { toolName: 'run_command', toolClass: 'execute', args: { command: 'ls' } }).decision, 'ask');
  });
});
