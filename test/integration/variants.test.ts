/**
 * Variants (SPEC §4.3, journey 5) end to end: real git repositories in temporary
 * directories, a real engine (SQLite store, streams, gate, run registry, auto-approving policy), the real
 * OpenAI provider talking to one fake OpenAI server per variant (so the scripts never
 * interleave), real tools editing real worktrees. Covers live diff stats, adoption byte for byte
 * (text, binary, executable, new and deleted files) with the user's HEAD/index/branch/stash
 * untouched, conflict refusal that changes nothing, cancellation, input validation and four
 * variants in parallel.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assembleEngine, type Engine } from '../../src/engine/engine';
import type { EngineServices } from '../../src/engine/services';
import { deriveSubagentFromTask } from '../../src/engine/ids/ids';
import { ProviderRegistry } from '../../src/engine/providers/registry';
import { registerBuiltinProviders } from '../../src/engine/providers/builtins';
import { TestHost } from '../support/test-engine';
import { listManagedWorktrees } from '../../src/engine/worktrees/worktrees';
import { childThreads } from '../../src/engine/store/family-reads';
import { VariantError, VariantPool, type VariantChange, type VariantGroup } from '../../src/engine/variants/index';
import { httpError, startFakeOpenAI, stallAfter, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { makeRepo, makeSandbox, snapshotFiles, userState, writeFile, type Sandbox } from '../support/worktree-fixtures';
import { assertRejectsCode } from '../support/assert-code';
import { until } from '../support/wait';
import { LedgerError } from '../../src/engine/ledger/errors';
import { grant, setCap, setUserPrice } from '../../src/engine/ledger/writes';
import { ratesToWire } from '../../src/engine/ledger/catalog';

/** a.txt has 20 lines so edits near its top and bottom are separate hunks. */
const A_LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const A_BASE = `${A_LINES.join('\n')}\n`;
const withLine = (n: number, text: string) => `${A_LINES.map((l, i) => (i === n - 1 ? text : l)).join('\n')}\n`;
const A_V0 = withLine(3, 'line 3 rewritten by variant 0');
const A_V1 = withLine(18, 'line 18 rewritten by variant 1');
const BIN_BYTES = Buffer.from([0x47, 0x49, 0x46, 0x38, 0x00, 0x01, 0xff, 0xfe, 0x0a, 0x00]);
/** Pause between a slow turn's SSE events: gives the stats refresh after the previous tool time to land mid-run. */
const SLOW = { eventDelayMs: 80 };
const SLOW_DONE = (who: string) => textTurn([`${who} `, 'is done.'], SLOW);

/** Files of the work tree (not .git/, not .vox/) with their bytes. */
function treeFiles(root: string): Map<string, Buffer> {
  const all = snapshotFiles(root);
  for (const k of [...all.keys()]) if (k === '.git' || k.startsWith(`.git${path.sep}`) || k.startsWith(`.vox${path.sep}`)) all.delete(k);
  return all;
}

function assertSameTree(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
  for (const [k, v] of expected) assert.ok(actual.get(k)!.equals(v), `${k} differs: ${JSON.stringify(actual.get(k)!.toString())}`);
}

describe('variants: real git, real engine, one fake OpenAI server per variant', function () {
  this.timeout(20_000);
  let sb: Sandbox;
  let repo: string;
  let engine: Engine;
  let services: EngineServices;
  let servers: FakeServer[];
  let pool: VariantPool;
  let groups: VariantGroup[];

  /** One fake server per script; model ref `openai:v<i>` talks to server i. */
  async function startPool(scripts: FakeResponse[][]): Promise<void> {
    servers = await Promise.all(scripts.map((responses) => startFakeOpenAI({ responses })));
    const resolvers = servers.map((s) => {
      const r = new ProviderRegistry({ secret: async () => 'sk-test', settings: () => ({ openaiBaseUrl: s.baseUrl }) });
      registerBuiltinProviders(r, { demoModelPath: '' });
      return r;
    });
    pool = new VariantPool({
      store: services.store,
      runs: services.runs,
      resolveModel: (ref) => {
        const m = /^openai:v(\d)$/.exec(ref);
        return m && resolvers[Number(m[1])] ? resolvers[Number(m[1])]!.resolve(ref) : services.providers.resolve(ref);
      },
    });
  }

  async function start(models: string[], prompt = 'improve the project'): Promise<VariantGroup> {
    const g = await pool.startVariants({ repoRoot: repo, prompt, models });
    groups.push(g);
    return g;
  }

  beforeEach(() => {
    sb = makeSandbox();
    repo = makeRepo(sb, 'proj', { files: { 'a.txt': A_BASE, 'b.txt': 'bee\n' } });
    fs.mkdirSync(path.join(sb.dir, 'state'));
    ({ engine, services } = assembleEngine(
      { dbPath: path.join(sb.dir, 'state', 'vox.db'), workspaceRoot: repo, demoModelPath: path.join(sb.dir, 'none.gguf') },
      new TestHost({ approval: { write: 'auto', execute: 'auto' } }),
    ));
    servers = [];
    groups = [];
  });
  afterEach(async () => {
    for (const g of groups) await g.discardAll().catch(() => undefined);
    await Promise.all(servers.map((s) => s.close()));
    await engine.dispose();
    sb.cleanup();
  });

  /** Variant 0: edits a.txt near the top, adds new.txt, a binary file and an executable script. Variant 1: deletes b.txt, edits a.txt near the bottom. */
  const twoVariantScripts = (): FakeResponse[][] => [
    [
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: A_V0 } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'new.txt', content: 'brand new\n' } }], SLOW),
      toolCallTurn([{ name: 'run_command', args: { command: "printf 'GIF8\\000\\001\\377\\376\\n\\000' > img.bin && printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh" } }]),
      SLOW_DONE('variant 0'),
    ],
    [
      toolCallTurn([{ name: 'run_command', args: { command: 'rm b.txt' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: A_V1 } }], SLOW),
      SLOW_DONE('variant 1'),
    ],
  ];

  it('runs two variants with live stats, adopts variant 0 byte for byte and removes every worktree', async () => {
    await startPool(twoVariantScripts());
    writeFile(repo, '.env', 'TOKEN=local\n'); // untracked: copied into each worktree, never part of a variant's changes
    const before = userState(repo);
    const changes: Array<VariantChange & { runInStore: string | undefined }> = [];
    const g = await start(['openai:v0', 'openai:v1']);
    // With each change, what the store says about the variant's run at that moment.
    g.onDidChange((c) => changes.push({ ...c, runInStore: services.store.runs(c.variant.threadId)[0]?.status }));
    assert.deepEqual(g.variants.map((v) => v.status), ['creating', 'creating']);
    assert.equal(g.variants[0]!.threadId, deriveSubagentFromTask(g.poolId, `${g.poolId}/variant-0`));
    assert.equal(g.variants[1]!.worktreePath, path.join(repo, '.vox', 'worktrees', 'muse', g.poolId.replace(':', '-'), 'variant-1'));

    const done = await g.done;
    assert.deepEqual(done.map((v) => [v.status, v.error]), [['completed', null], ['completed', null]]);
    assert.equal(fs.readFileSync(path.join(done[0]!.worktreePath, '.env'), 'utf8'), 'TOKEN=local\n');
    const [s0, s1] = done.map((v) => v.stats);
    assert.deepEqual(s0!.files.map((f) => [f.path, f.status, f.additions, f.deletions, f.binary, f.newMode]), [
      ['a.txt', 'modified', 1, 1, false, '100644'],
      ['img.bin', 'added', 0, 0, true, '100644'],
      ['new.txt', 'added', 1, 0, false, '100644'],
      ['run.sh', 'added', 2, 0, false, '100755'],
    ]);
    assert.deepEqual([s0!.additions, s0!.deletions], [4, 1]);
    assert.deepEqual(s1!.files.map((f) => [f.path, f.status, f.additions, f.deletions, f.oldMode, f.newMode]), [
      ['a.txt', 'modified', 1, 1, '100644', '100644'],
      ['b.txt', 'deleted', 0, 1, '100644', null],
    ]);

    // Live: stats arrived while the run was still going (its run.ended not yet written), the
    // first one right after the first edit; statuses went creating → running → completed.
    for (const i of [0, 1]) {
      const mine = changes.filter((c) => c.variant.index === i);
      const live = mine.filter((c) => c.kind === 'stats' && c.runInStore === 'running');
      assert.ok(live.length >= 1, `variant ${i}: no stats while running: ${JSON.stringify(mine.map((c) => [c.kind, c.runInStore]))}`);
      for (const c of live) for (const f of c.variant.stats.files) assert.ok(done[i]!.stats.files.some((g) => g.path === f.path));
      assert.deepEqual(mine.filter((c) => c.kind === 'status').map((c) => c.variant.status), ['running', 'completed']);
    }
    const firstV0 = changes.find((c) => c.kind === 'stats' && c.variant.index === 0)!;
    assert.deepEqual(firstV0.variant.stats.files.map((f) => f.path), ['a.txt'], 'stats refreshed after the first edit');
    assert.equal(firstV0.runInStore, 'running');

    // The variants' own threads hold their runs.
    for (const v of done) assert.equal(services.store.runs(v.threadId)[0]!.status, 'completed');

    // Open Diff: binary-safe patch.
    const diff = await g.diffVariant(0);
    assert.match(diff.text, /^diff --git a\/img\.bin b\/img\.bin\nnew file mode 100644\n/m);
    assert.match(diff.text, /GIT binary patch/);
    assert.match(diff.text, /^new file mode 100755$/m);
    assert.deepEqual(diff.stats, s0);

    await assertRejectsCode(g.adoptVariant(7), 'variant/unknownVariant', VariantError);
    const mainBefore = treeFiles(repo);
    const result = await g.adoptVariant(0);
    assert.deepEqual(result.removalErrors, []);
    assert.deepEqual(result.files.map((f) => f.path), ['a.txt', 'img.bin', 'new.txt', 'run.sh']);

    // Exactly variant 0's changes, byte for byte; nothing else.
    const expected = new Map(mainBefore);
    expected.set('a.txt', Buffer.from(A_V0));
    expected.set('new.txt', Buffer.from('brand new\n'));
    expected.set('img.bin', BIN_BYTES);
    expected.set('run.sh', Buffer.from('#!/bin/sh\necho hi\n'));
    assertSameTree(treeFiles(repo), expected);
    assert.ok((fs.statSync(path.join(repo, 'run.sh')).mode & 0o111) !== 0, 'run.sh is executable');
    const after = userState(repo);
    assert.deepEqual([after.head, after.branch, after.indexSha256, after.stash, after.branches], [before.head, before.branch, before.indexSha256, before.stash, before.branches]);
    assert.deepEqual(after.status.split('\n').filter(Boolean).sort(), [' M a.txt', '?? .env', '?? img.bin', '?? new.txt', '?? run.sh']);

    // The pool ended: every worktree and its group directory is gone.
    assert.deepEqual(g.variants.map((v) => v.status), ['adopted', 'discarded']);
    assert.deepEqual(await listManagedWorktrees(repo), []);
    assert.equal(fs.existsSync(path.dirname(g.variants[0]!.worktreePath)), false);
    const admin = path.join(repo, '.git', 'worktrees');
    assert.ok(!fs.existsSync(admin) || fs.readdirSync(admin).length === 0, 'git has no admin entries left');
    await assertRejectsCode(g.adoptVariant(1), 'variant/alreadyAdopted', VariantError);
    await assertRejectsCode(g.diffVariant(0), 'variant/alreadyAdopted', VariantError);
    assert.equal(pool.get(g.poolId), undefined, 'the pool forgets an ended group');
  });

  it('refuses a conflicting adoption naming the files and changing nothing; a clean one then applies on top of local edits', async () => {
    await startPool(twoVariantScripts());
    const g = await start(['openai:v0', 'openai:v1']);
    await g.done;
    // Local, uncommitted: line 4 of a.txt (inside variant 0's hunk, far from variant 1's) and an untracked new.txt.
    const localA = withLine(4, 'line 4 edited locally');
    writeFile(repo, 'a.txt', localA);
    writeFile(repo, 'new.txt', 'mine, not the variant\'s\n');
    const before = userState(repo);
    const filesBefore = treeFiles(repo);

    const err = await assertRejectsCode(g.adoptVariant(0), 'variant/conflict', VariantError);
    assert.deepEqual(err.details.files, ['a.txt', 'new.txt']);
    assert.match(err.message, /a\.txt, new\.txt/);
    assert.match(err.message, /nothing was changed/);
    assertSameTree(treeFiles(repo), filesBefore);
    assert.deepEqual(userState(repo), before);
    assert.deepEqual(g.variants.map((v) => v.status), ['completed', 'completed'], 'a refused adoption leaves the pool as it was');
    assert.equal((await listManagedWorktrees(repo)).length, 2);

    // Variant 1's hunk does not touch the local edit: it applies and keeps it.
    await g.adoptVariant(1);
    const merged = withLine(4, 'line 4 edited locally').replace('line 18\n', 'line 18 rewritten by variant 1\n');
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), merged);
    assert.equal(fs.existsSync(path.join(repo, 'b.txt')), false);
    assert.equal(fs.readFileSync(path.join(repo, 'new.txt'), 'utf8'), 'mine, not the variant\'s\n');
    assert.deepEqual(g.variants.map((v) => v.status), ['discarded', 'adopted']);
    assert.deepEqual(await listManagedWorktrees(repo), []);
  });

  it('a failed variant shows its reason and cannot be adopted (typed error, nothing changed)', async () => {
    await startPool([
      [toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: A_V0 } }]), httpError(400, { message: 'model refused the request' })],
      [SLOW_DONE('variant 1')],
    ]);
    const g = await start(['openai:v0', 'openai:v1']);
    await g.done;
    // Started without a parent (the palette, the CLI): one thread made for the group holds them.
    const top = services.store.listThreadsPage({ limit: 50 }).threads;
    assert.equal(top.length, 1, `top-level threads: ${JSON.stringify(top.map((t) => t.title))}`);
    assert.match(top[0]!.title, /^Variants \(2\): /);
    assert.deepEqual(childThreads(services.store.db, top[0]!.id).map((t) => t.id).sort(), g.variants.map((v) => v.threadId).sort());
    assert.equal(g.variants[0]!.status, 'failed');
    assert.ok(g.variants[0]!.error && g.variants[0]!.error.length > 0, 'the failure keeps its reason');
    const filesBefore = treeFiles(repo);
    const err = await assertRejectsCode(g.adoptVariant(0), 'variant/failed', VariantError);
    assert.match(err.message, /variant 0 failed/);
    assertSameTree(treeFiles(repo), filesBefore);
    assert.deepEqual(g.variants.map((v) => v.status), ['failed', 'completed']);
    // A finished pool is cleared: every worktree goes, and the pool leaves the list.
    assert.equal((await listManagedWorktrees(repo)).length, 2);
    assert.deepEqual(await g.clear(), [0, 1]);
    assert.deepEqual(await listManagedWorktrees(repo), []);
    assert.deepEqual(pool.list(), []);
  });

  it('cancelAll stops every running variant promptly; discardAll removes the worktrees', async () => {
    const stall = (): FakeResponse[] => [
      toolCallTurn([{ name: 'write_file', args: { path: 'wip.txt', content: 'half done\n' } }]),
      stallAfter(2, textTurn(['never', ' finishes'])),
    ];
    await startPool([stall(), stall()]);
    const parentThreadId = 'thread:parent-of-variants';
    services.store.append({ type: 'thread.created', threadId: parentThreadId, title: 'parent' });
    const g = await pool.startVariants({ repoRoot: repo, prompt: 'work slowly', models: ['openai:v0', 'openai:v1'], parentThreadId });
    groups.push(g);
    assert.equal(g.variants[1]!.threadId, deriveSubagentFromTask(parentThreadId, `${g.poolId}/variant-1`));
    assert.equal(path.basename(path.dirname(g.variants[1]!.worktreePath)), 'thread-parent-of-variants');
    // The variants' threads nest under their parent: not in the top-level list, listed as its children.
    const top = services.store.listThreadsPage({ limit: 50 }).threads.map((t) => t.id);
    assert.deepEqual(top.filter((id) => g.variants.some((v) => v.threadId === id)), [], 'variant threads are not top-level');
    assert.ok(top.includes(parentThreadId));
    assert.deepEqual(childThreads(services.store.db, parentThreadId).map((t) => t.id).sort(), g.variants.map((v) => v.threadId).sort());
    // One pool per thread at a time.
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'again', models: ['openai:v0'], parentThreadId }), 'variant/alreadyExists', VariantError);
    await until(() => servers.every((s) => s.requests.length >= 2) && g.variants.every((v) => v.stats.files.length === 1), { what: 'the variants to reach the stalling request', timeoutMs: 10_000 });
    assert.deepEqual(g.variants.map((v) => v.status), ['running', 'running']);
    await assertRejectsCode(g.adoptVariant(0), 'variant/notFinished', VariantError);

    const t0 = Date.now();
    await g.cancelAll();
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 2_000, `cancel took ${elapsed} ms`);
    assert.deepEqual(g.variants.map((v) => v.status), ['cancelled', 'cancelled']);
    for (const v of g.variants) assert.equal(services.store.runs(v.threadId)[0]!.status, 'cancelled');
    assert.deepEqual(g.variants[0]!.stats.files.map((f) => f.path), ['wip.txt'], 'partial work stays visible');

    await g.discardVariant(1);
    await g.discardVariant(1); // idempotent
    assert.equal(fs.existsSync(g.variants[1]!.worktreePath), false);
    await assertRejectsCode(g.diffVariant(1), 'variant/discarded', VariantError);
    await g.discardAll();
    assert.deepEqual(g.variants.map((v) => v.status), ['discarded', 'discarded']);
    assert.deepEqual(await listManagedWorktrees(repo), []);
  });

  it('cancelAll while the worktrees are still being created: no turn starts', async () => {
    await startPool([[textTurn('unused')]]);
    const g = await start(['openai:v0']);
    assert.deepEqual(g.variants.map((v) => v.status), ['creating']);
    await assertRejectsCode(g.diffVariant(0), 'variant/notFinished', VariantError);
    await g.cancelAll();
    assert.deepEqual(g.variants.map((v) => [v.status, v.runId]), [['cancelled', null]]);
    assert.equal(servers[0]!.requests.length, 0);
    assert.equal((await listManagedWorktrees(repo)).length, 1, 'the worktree stays until discarded');
    await g.discardVariant(0);
    assert.deepEqual(await listManagedWorktrees(repo), []);
  });

  it('rejects bad input with typed errors before creating anything', async () => {
    await startPool([[], []]);
    const threadsBefore = services.store.listThreads().length;
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'x', models: [] }), 'variant/invalidModels', VariantError);
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'x', models: ['openai:v0', 'openai:v1', 'openai:v0', 'openai:v1', 'openai:v0'] }), 'variant/tooManyVariants', VariantError);
    const bad = await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'x', models: ['openai:v0', 'nonsense', 'bogus:model'] }), 'variant/invalidModels', VariantError);
    assert.deepEqual(bad.details.models!.map((m) => [m.index, m.ref]), [[1, 'nonsense'], [2, 'bogus:model']]);
    assert.match(bad.message, /Unknown provider "bogus"/);
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: '   ', models: ['openai:v0'] }), 'variant/invalidPrompt', VariantError);
    const plain = path.join(sb.dir, 'plain');
    fs.mkdirSync(plain);
    await assertRejectsCode(pool.startVariants({ repoRoot: plain, prompt: 'x', models: ['openai:v0'] }), 'variant/notARepository', VariantError);
    const empty = makeRepo(sb, 'empty', { commit: false });
    await assertRejectsCode(pool.startVariants({ repoRoot: empty, prompt: 'x', models: ['openai:v0'] }), 'variant/noCommits', VariantError);
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'x', models: ['openai:v0'], parentThreadId: 'thread:missing' }), 'variant/unknownThread', VariantError);
    assert.equal(services.store.listThreads().length, threadsBefore);
    assert.equal(fs.existsSync(path.join(repo, '.vox')), false);
    assert.deepEqual(servers.map((s) => s.requests.length), [0, 0]);
  });

  it('a fan-out the balance or a cap cannot cover is refused whole, before any worktree, thread or request', async () => {
    await startPool([[textTurn('v0')], [textTurn('v1')]]);
    const store = services.store;
    // $10 per million tokens in and out: each variant's first call is bounded by 8,192 output tokens alone (81,920 µ$).
    const rates = ratesToWire({ input: 10_000_000n, output: 10_000_000n, cacheRead: 10_000_000n, cacheWrite5m: 10_000_000n, cacheWrite1h: 10_000_000n });
    setUserPrice(store, 'v0', rates);
    setUserPrice(store, 'v1', rates);
    // Enough for one variant, not for two.
    grant(store, { kind: 'purchase', amountMicroUsd: 120_000, note: null });
    const threadsBefore = store.listThreads().length;
    const refused = await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'improve the project', models: ['openai:v0', 'openai:v1'] }), 'ledger/insufficientBattery', LedgerError);
    assert.match(refused.message, /these 2 variants' first calls could cost up to/);
    assert.ok(refused.details!.requiredBu! > 120 && refused.details!.remainingBu === 120, JSON.stringify(refused.details));
    // A daily block cap the sum passes, with balance to spare: refused whole as well.
    grant(store, { kind: 'bonus', amountMicroUsd: 10_000_000, note: null });
    setCap(store, { scope: 'daily', threadId: null, capMicroUsd: 100_000, action: 'block' });
    await assertRejectsCode(pool.startVariants({ repoRoot: repo, prompt: 'improve the project', models: ['openai:v0', 'openai:v1'] }), 'ledger/capReached', LedgerError);
    assert.equal(store.listThreads().length, threadsBefore);
    assert.equal(fs.existsSync(path.join(repo, '.vox')), false, 'no worktree');
    assert.deepEqual(servers.map((s) => s.requests.length), [0, 0]);
  });

  it('runs four variants in parallel to completion', async () => {
    const script = (i: number): FakeResponse[] => [
      toolCallTurn([{ name: 'write_file', args: { path: `v${i}.txt`, content: `variant ${i}\n` } }]),
      SLOW_DONE(`variant ${i}`),
    ];
    await startPool([0, 1, 2, 3].map(script));
    let running = 0;
    let maxRunning = 0;
    const g = await start(['openai:v0', 'openai:v1', 'openai:v2', 'openai:v3']);
    g.onDidChange((c) => {
      if (c.kind !== 'status') return;
      running += c.variant.status === 'running' ? 1 : -1;
      maxRunning = Math.max(maxRunning, running);
    });
    const done = await g.done;
    assert.deepEqual(done.map((v) => v.status), ['completed', 'completed', 'completed', 'completed']);
    assert.deepEqual(done.map((v) => v.stats.files.map((f) => f.path)), [['v0.txt'], ['v1.txt'], ['v2.txt'], ['v3.txt']]);
    assert.equal(maxRunning, 4, 'all four ran at the same time');
    // Four servers each served their own two requests: no script consumed by another variant.
    assert.deepEqual(servers.map((s) => [s.requests.length, s.pending()]), [[2, 0], [2, 0], [2, 0], [2, 0]]);
    assert.equal(new Set(done.map((v) => v.threadId)).size, 4);
    assert.equal((await listManagedWorktrees(repo)).length, 4);
    await g.discardAll();
    assert.deepEqual(await listManagedWorktrees(repo), []);
  });
});
