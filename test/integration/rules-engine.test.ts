/**
 * Rules and $variables through the protocol on a real engine (real SQLite, real temp workspaces,
 * the official OpenAI SDK against the scripted loopback server): the model receives the
 * `<user_rules>` block with the turn and the stripped prompt, the thread keeps the stripped
 * prompt only; peer files, duplicates, toggles, create/update with typed errors, reload on change,
 * previewRules, getSystemPrompt and rule suggestions in the @-mention popup.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';
import { ClientError } from '../../src/client/engine-client';
import { countText } from '../../src/engine/providers/token-count';
import { assertRejectsCode } from '../support/assert-code';

type Ev = { type: string; role?: string; content?: string };

const write = (dir: string, rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};

describe('rules over the protocol', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine;

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir('vox-rules-'));
  });
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  const engine = (host = new TestHost()) => (t = startTestEngine({ dir, host }));

  it('the model gets the <user_rules> block with the turn and the stripped prompt; the thread keeps the prompt only', async () => {
    write(dir, '.vox/rules/style.md', '---\nname: style\nattach: manual\ndescription: House style\n---\nUse tabs, never spaces.');
    write(dir, '.vox/rules/always.md', '---\nattach: always\n---\nAnswer briefly. Branch: $git_branch.');
    write(dir, '.vox/rules/ts.md', '---\nattach: manual\npaths: ["src/**/*.ts"]\n---\nTypeScript strict.');
    write(dir, 'src/a.ts', 'export const a = 1;\n');
    server = await startFakeOpenAI({ responses: [textTurn('done'), textTurn('again')] });
    engine(new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }));
    const c = t.client();
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'Fix @style the header of @nope, see @src/a.ts', model: 'openai:gpt-4o-mini', mentions: [{ kind: 'file', target: 'src/a.ts' }] });
    assert.deepEqual(r.rules, ['always', 'ts', 'style']);
    assert.deepEqual(r.warnings, ['@nope is neither a rule nor a known mention']);
    assert.equal(r.prompt, 'Fix the header of @nope, see @src/a.ts', 'the stored prompt, for the webview\'s message being sent');
    const evs: Ev[] = [];
    c.on('events', (u) => void evs.push(...(u.events as Ev[])));
    await c.call('subscribeThread', { threadId: r.threadId, afterSeq: 0 });
    await waitFor('run end', 30_000, () => evs.some((e) => e.type === 'run.ended'), 20);
    const sent = server.requests[0]!.body.messages.at(-1).content as string;
    assert.match(sent, /^Fix the header of @nope, see @src\/a\.ts\n\n<!-- vox-context /);
    assert.match(sent, /<\/context>\n\n<user_rules>\n/);
    assert.match(sent, /<rule name="always">\nAnswer briefly\. Branch: \.\n<\/rule>\n<rule name="ts">\nTypeScript strict\.\n<\/rule>\n<rule name="style">\nUse tabs, never spaces\.\n<\/rule>\n<\/user_rules>$/);
    assert.equal(sent.split('<user_rules>').length, 2, 'one block');
    const user = evs.find((e) => e.type === 'message.added' && e.role === 'user')!;
    assert.ok(!user.content!.includes('<user_rules>'), 'the stored message has no rules block');
    assert.match(user.content!, /^Fix the header of @nope/);
    // The next turn: the earlier message is replayed without a block; only the new turn gets one (always rules).
    const r2 = await c.call('sendPrompt', { threadId: r.threadId, prompt: 'and the footer', model: 'openai:gpt-4o-mini', ifBusy: 'queue' });
    await waitFor('second request', 30_000, () => server!.requests.length >= 2 && evs.filter((e) => e.type === 'run.ended').length >= 2, 20);
    assert.deepEqual(r2.rules, ['always']);
    assert.equal(r2.prompt, undefined, 'nothing stripped: no prompt in the answer');
    const msgs = server.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    assert.equal(msgs.filter((m) => m.content.includes('<user_rules>')).length, 1);
    assert.match(msgs.at(-1)!.content, /^and the footer\n\n<user_rules>/);
  });

  it('a queued prompt keeps its tokens while it waits; as it starts they are stripped and its block goes with that turn', async () => {
    write(dir, '.vox/rules/style.md', '---\nattach: manual\n---\nUse tabs.');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    server = await startFakeOpenAI({ responses: [textTurn(['first ', 'answer'], { holds: [{ afterEvents: 1, release: held }] }), textTurn('second')] });
    engine(new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }));
    const c = t.client();
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'start', model: 'openai:gpt-4o-mini' });
    await waitFor('the first request', 10_000, () => server!.requests.length >= 1, 20);
    const queued = await c.call('sendPrompt', { threadId: first.threadId, prompt: '@style then this', model: 'openai:gpt-4o-mini' });
    assert.ok(queued.queued, 'queued while the thread runs');
    assert.deepEqual(queued.rules, ['style']);
    assert.equal((await c.call('listQueue', { threadId: first.threadId })).entries[0]!.prompt, '@style then this');
    release();
    await waitFor('the queued turn', 30_000, () => server!.requests.length >= 2, 20);
    const sent = server.requests[1]!.body.messages.at(-1).content as string;
    assert.equal(sent, 'then this\n\n<user_rules>\nThe user\'s rules for this request; follow them.\n<rule name="style">\nUse tabs.\n</rule>\n</user_rules>');
    const msgs = await c.call('getThread', { threadId: first.threadId });
    assert.deepEqual(msgs.messages.filter((m) => m.role === 'user').map((m) => m.content), ['start', 'then this']);
  });

  it('a regenerate re-attaches the rules its posture recorded; an edited prompt has its own tokens stripped and attached', async () => {
    write(dir, '.vox/rules/style.md', '---\nattach: manual\n---\nUse tabs.');
    write(dir, '.vox/rules/terse.md', '---\nattach: manual\n---\nBe terse.');
    server = await startFakeOpenAI({ responses: [textTurn('one'), textTurn('two'), textTurn('three')] });
    engine(new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }));
    const c = t.client();
    const evs: Ev[] = [];
    c.on('events', (u) => void evs.push(...(u.events as Ev[])));
    const r = await c.call('sendPrompt', { threadId: null, prompt: '@style fix it', model: 'openai:gpt-4o-mini' });
    await c.call('subscribeThread', { threadId: r.threadId, afterSeq: 0 });
    const ended = (n: number) => waitFor(`run ${n} ended`, 30_000, () => evs.filter((e) => e.type === 'run.ended').length >= n, 20);
    await ended(1);
    const regen = await c.call('regenerate', { threadId: r.threadId, runId: r.runId! });
    await ended(2);
    const again = server.requests[1]!.body.messages.at(-1).content as string;
    assert.equal(again, 'fix it\n\n<user_rules>\nThe user\'s rules for this request; follow them.\n<rule name="style">\nUse tabs.\n</rule>\n</user_rules>', 'the same rule, once, with the same stripped prompt');
    const runs = (await c.call('getThread', { threadId: r.threadId })).runs;
    assert.deepEqual(runs.find((x) => x.id === regen.runId)!.posture!.rules, ['style']);
    // Editing the prompt: the new text's tokens count, not the old posture's.
    const user = (await c.call('getThread', { threadId: r.threadId })).messages.find((m) => m.role === 'user')!;
    const edit = await c.call('editMessage', { threadId: r.threadId, messageId: user.id, content: '@terse fix it now' });
    await ended(3);
    const edited = server.requests[2]!.body.messages.at(-1).content as string;
    assert.match(edited, /^fix it now\n\n<user_rules>\n/);
    assert.match(edited, /<rule name="terse">/);
    assert.ok(!edited.includes('<rule name="style">'));
    const tree = await c.call('getThreadTree', { threadId: r.threadId });
    assert.equal(tree.messages.find((m) => m.id === edit.messageId)!.content, 'fix it now', 'the stored edit is stripped');
  });

  it('peer files are always rules (CLAUDE.md, AGENTS.md, a .clinerules folder); the setting turns them off', async () => {
    write(dir, 'CLAUDE.md', 'Claude says hi.');
    write(dir, 'AGENTS.md', 'Agents say hi.');
    write(dir, '.clinerules/style.md', '---\ndescription: cline front matter is body\n---\nCline style.');
    const host = new TestHost();
    engine(host);
    const l = await t.client().call('listRules', {});
    assert.deepEqual(l.rules.map((r) => [r.name, r.scope, r.attach, r.source]), [
      ['claude-md', 'peer', 'always', 'CLAUDE.md'], ['agents-md', 'peer', 'always', 'AGENTS.md'], ['clinerules-style', 'peer', 'always', '.clinerules/style.md'],
    ]);
    const p = await t.client().call('previewRules', { prompt: 'hello' });
    assert.deepEqual(p.rules, ['claude-md', 'agents-md', 'clinerules-style']);
    assert.match(p.block, /Claude says hi\.[\s\S]*Agents say hi\.[\s\S]*Cline style\./);
    host.rules = { readPeerFiles: false };
    await host.setModel(host.model()); // a settings change
    assert.deepEqual((await t.client().call('listRules', {})).rules, []);
    // .clinerules as a single file
    fs.rmSync(path.join(dir, '.clinerules'), { recursive: true });
    write(dir, '.clinerules', 'One file.');
    host.rules = {};
    await host.setModel(host.model());
    assert.ok((await t.client().call('listRules', {})).rules.some((r) => r.name === 'clinerules' && r.body === 'One file.'));
  });

  it('a broken file is listed with its error and never hides the others; workspace overrides user (reported)', async () => {
    write(dir, '.vox/rules/good.md', '---\nattach: always\n---\nGood.');
    write(dir, '.vox/rules/bad.md', '---\nname: file\n---\nx');
    write(dir, '.vox/rules/worse.md', '---\nattach: sometimes\n---\nx');
    write(dir, '.vox/rules/shared.md', '---\nattach: manual\n---\nFrom the workspace.');
    write(dir, '.vox/rules/big.md', 'x'.repeat(70 * 1024));
    const host = new TestHost();
    host.rules = { rules: [{ name: 'shared', attach: 'always', body: 'From settings.' }, { name: 'mine', attach: 'manual', body: 'Mine.' }, { name: 'bad name', body: 'x' }] };
    engine(host);
    const l = await t.client().call('listRules', {});
    assert.deepEqual(l.rules.map((r) => `${r.name}:${r.scope}`).sort(), ['good:workspace', 'mine:user', 'shared:workspace']);
    assert.equal(l.rules.find((r) => r.name === 'shared')!.overrides, 'settings (vox.rules)');
    assert.deepEqual(l.errors.map((e) => [e.source, e.line, e.code]).sort(), [
      ['.vox/rules/bad.md', 2, 'rule/reservedName'], ['.vox/rules/big.md', null, 'rule/tooLarge'], ['.vox/rules/worse.md', 2, 'rule/invalidRule'], ['settings (vox.rules)[2]', null, 'rule/invalidName'],
    ]);
    assert.ok(host.notices.some((n) => n.source === 'rules' && /overrides/.test(n.message)));
  });

  it('create, update, toggle; bad, reserved and taken names and writes outside the workspace are refused', async () => {
    const host = new TestHost();
    engine(host);
    const c = t.client();
    const created = await c.call('createRule', { scope: 'workspace', name: 'review', attach: 'manual', body: 'Review for $active_spoke.', description: 'Reviews', paths: ['src/**'] });
    assert.equal(created.source, '.vox/rules/review.md');
    assert.equal(created.body, 'Review for coding.');
    assert.match(fs.readFileSync(path.join(dir, '.vox/rules/review.md'), 'utf8'), /^---\nname: review\nattach: manual\ndescription: "Reviews"\npaths:\n {2}- src\/\*\*\n---\nReview for \$active_spoke\.\n$/);
    await assertRejectsCode(c.call('createRule', { scope: 'workspace', name: 'review', attach: 'manual', body: 'x' }), 'rule/duplicateName', ClientError);
    await assertRejectsCode(c.call('createRule', { scope: 'workspace', name: '../etc', attach: 'manual', body: 'x' }), 'rule/invalidName', ClientError);
    await assertRejectsCode(c.call('createRule', { scope: 'workspace', name: 'a+', attach: 'manual', body: 'x' }), 'rule/invalidName', { type: ClientError, message: /letters, digits/ });
    await assertRejectsCode(c.call('createRule', { scope: 'user', name: 'web', attach: 'manual', body: 'x' }), 'rule/reservedName', ClientError);
    await assertRejectsCode(c.call('getRule', { name: 'nope' }), 'rule/unknownRule', ClientError);
    const user = await c.call('createRule', { scope: 'user', name: 'terse', attach: 'always', body: 'Be terse.' });
    assert.equal(user.scope, 'user');
    assert.deepEqual(host.rules?.rules, [{ name: 'terse', attach: 'always', body: 'Be terse.' }]);
    const up = await c.call('updateRule', { name: 'review', attach: 'always', body: 'Review hard.' });
    assert.equal(up.attach, 'always');
    assert.match(fs.readFileSync(path.join(dir, '.vox/rules/review.md'), 'utf8'), /attach: always[\s\S]*Review hard\./);
    const off = await c.call('setRuleEnabled', { name: 'terse', enabled: false });
    assert.equal(off.enabled, false);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, '.vox/rules/.disabled.json'), 'utf8')), { disabled: ['terse'] });
    assert.deepEqual((await c.call('previewRules', { prompt: 'x' })).rules, ['review']);
    assert.equal((await c.call('setRuleEnabled', { name: 'terse', enabled: true })).enabled, true);
    assert.deepEqual((await c.call('previewRules', { prompt: 'x' })).rules, ['review', 'terse']);
    // .vox/rules as a symlink out of the workspace: nothing is written there.
    const outside = fs.realpathSync(makeTmpDir('vox-outside-'));
    try {
      fs.rmSync(path.join(dir, '.vox/rules'), { recursive: true });
      fs.symlinkSync(outside, path.join(dir, '.vox/rules'));
      await assertRejectsCode(c.call('createRule', { scope: 'workspace', name: 'escape', attach: 'manual', body: 'x' }), 'rule/outsideWorkspace', ClientError);
      assert.deepEqual(fs.readdirSync(outside), []);
    } finally {
      removeTmpDir(outside);
    }
  });

  it('reloads when a rule file changes on disk (watched, debounced)', async () => {
    write(dir, '.vox/rules/a.md', '---\nattach: always\n---\nOne.');
    engine();
    const c = t.client();
    assert.equal((await c.call('getRule', { name: 'a' })).body, 'One.');
    write(dir, '.vox/rules/a.md', '---\nattach: always\n---\nTwo.');
    write(dir, '.vox/rules/b.md', 'New.');
    await waitFor('reload', 10_000, async () => (await c.call('listRules', {})).rules.length === 2, 50);
    assert.equal((await c.call('getRule', { name: 'a' })).body, 'Two.');
  });

  it('manual rules are offered by suggestMentions (kind rule); getSystemPrompt resolves $variables and lists the always rules', async () => {
    write(dir, '.vox/rules/style.md', '---\nattach: manual\ndescription: House style\n---\nTabs.');
    write(dir, '.vox/rules/always.md', '---\nattach: always\n---\nAlways.');
    write(dir, 'stylesheet.css', 'a{}');
    const host = new TestHost({ secrets: { openaiApiKey: 'sk-x' } });
    host.rules = { systemPromptAppend: 'Workspace: $workspace_root; spoke $active_spoke; $unknown stays.' };
    engine(host);
    const c = t.client();
    const s = await c.call('suggestMentions', { query: 'sty' });
    assert.deepEqual(s.items[0], { kind: 'rule', target: 'style', label: 'style', detail: 'rule · House style' });
    assert.ok(s.items.some((i) => i.kind === 'file' && i.label === 'stylesheet.css'), 'files are still offered');
    assert.ok(!(await c.call('suggestMentions', { query: 'alw' })).items.some((i) => i.kind === 'rule'), 'always rules are not offered');
    // The context meter counts what the turn will send: the stripped draft and its rules block.
    const e = await c.call('estimateContext', { threadId: null, draft: 'hi @style', model: 'openai:gpt-4o' });
    const preview = await c.call('previewRules', { prompt: 'hi @style' });
    assert.equal(e.parts.prompt, await countText('o200k_base', `hi\n\n${preview.block}`));
    assert.equal(e.parts.system, await countText('o200k_base', (await c.call('getSystemPrompt', { threadId: null })).systemPrompt));
    const sp = await c.call('getSystemPrompt', { threadId: null });
    assert.ok(sp.systemPrompt.endsWith(`Workspace: ${path.basename(dir)}; spoke coding; $unknown stays.`), sp.systemPrompt);
    assert.deepEqual(sp.rules, ['always']);
    assert.match(sp.rulesBlock, /<rule name="always">\nAlways\.\n<\/rule>/);
  });
});
