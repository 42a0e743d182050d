/**
 * The contribution installer (src/extension/contribution.ts) with a recording registrar: a
 * contribution registers exactly the commands it declares (an undeclared id, a repeated one, or
 * a declared one left out fails its installation), APIs come back under their keys, and disposal
 * runs in reverse: the last contribution first, and within one its last disposable first.
 */
import { strict as assert } from 'node:assert';
import { Contributions, type ContributionEnv, type ExtensionContribution, type RegisterCommand } from '../../src/extension/contribution';

/** The installer never reads the environment itself; contributions get it as it is. */
const env = { marker: 'env' } as unknown as ContributionEnv;

function recorder() {
  const events: string[] = [];
  const register: RegisterCommand = (id, _fn, opts) => {
    events.push(`register ${id}${opts?.after ? ' +after' : ''}`);
    return { dispose: () => events.push(`dispose ${id}`) };
  };
  return { events, register };
}

const disposable = (events: string[], name: string) => ({ dispose: () => void events.push(`dispose ${name}`) });

describe('Contributions (the installer)', () => {
  it('registers the declared commands through the registrar, with their options, and hands the environment over', () => {
    const { events, register } = recorder();
    const seen: unknown[] = [];
    const c: ExtensionContribution<string> = {
      name: 'one',
      commands: ['vox.a', 'vox.b'],
      activate(e, scope) {
        seen.push(e);
        scope.command('vox.a', () => 1);
        scope.command('vox.b', () => 2, { after: () => undefined });
        return 'api';
      },
    };
    const installed = new Contributions(env, register);
    assert.equal(installed.install(c), 'api');
    assert.deepEqual(seen, [env]);
    assert.deepEqual(events, ['register vox.a', 'register vox.b +after']);
    assert.deepEqual(installed.names, ['one']);
  });

  it('refuses a command the contribution does not declare', () => {
    const { register } = recorder();
    const c: ExtensionContribution = { name: 'sly', commands: ['vox.a'], activate: (_e, scope) => { scope.command('vox.a', () => 1); scope.command('vox.hidden', () => 2); } };
    assert.throws(() => new Contributions(env, register).install(c), /contribution "sly" registers vox\.hidden, which it does not declare/);
  });

  it('fails when a declared command is not registered, or one is registered twice, or declared twice', () => {
    const { register } = recorder();
    const missing: ExtensionContribution = { name: 'lazy', commands: ['vox.a', 'vox.b', 'vox.c'], activate: (_e, scope) => scope.command('vox.b', () => 1) };
    assert.throws(() => new Contributions(env, register).install(missing), /contribution "lazy" declares vox\.a, vox\.c but does not register them/);
    const twice: ExtensionContribution = { name: 'eager', commands: ['vox.a'], activate: (_e, scope) => { scope.command('vox.a', () => 1); scope.command('vox.a', () => 1); } };
    assert.throws(() => new Contributions(env, register).install(twice), /registers vox\.a twice/);
    const declaredTwice: ExtensionContribution = { name: 'echo', commands: ['vox.a', 'vox.a'], activate: () => undefined };
    assert.throws(() => new Contributions(env, register).install(declaredTwice), /declares a command twice/);
  });

  it('installs a list in its key order and returns the APIs under the same keys', () => {
    const { events, register } = recorder();
    const list = {
      first: { name: 'first', commands: ['vox.1'], activate: (_e, scope) => { scope.command('vox.1', () => 1); return 1; } } satisfies ExtensionContribution<number>,
      second: { name: 'second', commands: [], activate: () => 'two' } satisfies ExtensionContribution<string>,
      third: { name: 'third', commands: ['vox.3'], activate: (_e, scope) => scope.command('vox.3', () => 3) } satisfies ExtensionContribution,
    };
    const installed = new Contributions(env, register);
    const apis = installed.installAll(list);
    assert.deepEqual(apis, { first: 1, second: 'two', third: undefined });
    const typed: { first: number; second: string } = apis; // the API types follow the list
    assert.equal(typed.second, 'two');
    assert.deepEqual(installed.names, ['first', 'second', 'third']);
    assert.deepEqual(events, ['register vox.1', 'register vox.3']);
  });

  it('disposes in reverse: the last contribution first, within one the last disposable first, each once', () => {
    const { events, register } = recorder();
    const installed = new Contributions(env, register);
    installed.install({ name: 'a', commands: ['vox.a'], activate: (_e, scope) => { scope.add(disposable(events, 'view a')); scope.command('vox.a', () => 1); } });
    installed.install({ name: 'b', commands: ['vox.b'], activate: (_e, scope) => { scope.command('vox.b', () => 1); scope.add(disposable(events, 'view b')); } });
    events.length = 0;
    installed.dispose();
    assert.deepEqual(events, ['dispose view b', 'dispose vox.b', 'dispose vox.a', 'dispose view a']);
    installed.dispose();
    assert.equal(events.length, 4, 'a second dispose does nothing');
  });

  it('disposes everything even when one disposable throws, then reports the failure', () => {
    const { events, register } = recorder();
    const installed = new Contributions(env, register);
    installed.install({ name: 'a', commands: [], activate: (_e, scope) => { scope.add(disposable(events, 'first')); scope.add({ dispose: () => { throw new Error('boom'); } }); scope.add(disposable(events, 'last')); } });
    assert.throws(() => installed.dispose(), /boom/);
    assert.deepEqual(events, ['dispose last', 'dispose first']);
  });

  it('keeps what a failing activation created, so disposing cleans it up', () => {
    const { events, register } = recorder();
    const installed = new Contributions(env, register);
    const failing: ExtensionContribution = { name: 'half', commands: ['vox.a'], activate: (_e, scope) => { scope.add(disposable(events, 'half view')); throw new Error('no engine'); } };
    assert.throws(() => installed.install(failing), /no engine/);
    installed.dispose();
    assert.deepEqual(events, ['dispose half view']);
  });
});
