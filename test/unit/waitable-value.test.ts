/**
 * WaitableValue (src/extension/waitable-value.ts), what the side bar chat's commands wait on for
 * its connection: a value already there comes at once, one set later resolves every waiter when
 * it is set (not on a polling tick), the wait gives up with undefined at its bound, and no waiter
 * is left behind either way.
 */
import { strict as assert } from 'node:assert';
import { WaitableValue } from '../../src/extension/waitable-value';

describe('WaitableValue', () => {
  it('resolves at once with a value already set', async () => {
    const v = new WaitableValue<string>();
    v.set('conn');
    assert.equal(await v.wait(10_000), 'conn');
    assert.equal(v.pending, 0);
  });

  it('resolves every waiter when the value is set, well before the bound', async () => {
    const v = new WaitableValue<string>();
    const t0 = Date.now();
    const waits = [v.wait(10_000), v.wait(10_000)];
    assert.equal(v.pending, 2);
    setTimeout(() => v.set('conn'), 20);
    assert.deepEqual(await Promise.all(waits), ['conn', 'conn']);
    assert.ok(Date.now() - t0 < 1_000, `took ${Date.now() - t0} ms`);
    assert.equal(v.pending, 0);
  });

  it('a value set synchronously after the wait began is still seen', async () => {
    const v = new WaitableValue<number>();
    const w = v.wait(10_000);
    v.set(7);
    assert.equal(await w, 7);
  });

  it('gives up with undefined at the bound when no value comes, and leaves no waiter', async () => {
    const v = new WaitableValue<string>();
    const t0 = Date.now();
    assert.equal(await v.wait(50), undefined);
    assert.ok(Date.now() - t0 >= 45, `gave up after ${Date.now() - t0} ms`);
    assert.equal(v.pending, 0);
  });

  it('clearing does not resolve waiters; a later value does', async () => {
    const v = new WaitableValue<string>();
    v.set('old');
    v.set(undefined);
    assert.equal(v.value, undefined);
    const w = v.wait(10_000);
    v.set(undefined);
    assert.equal(v.pending, 1);
    v.set('new');
    assert.equal(await w, 'new');
  });
});
