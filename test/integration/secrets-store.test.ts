/**
 * No credential enters the database, whichever way text arrives: a prompt (and the thread title
 * made from it, and the prompt history), the model's answer, a tool's output, and a bundle
 * written elsewhere (by an older Vox, or edited by hand). The tokens are searched for as bytes in
 * every file the engine wrote, and through the search an MCP client would use.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forgetSecrets } from '../../src/engine/platform/secrets';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

// Shapes of real tokens (not live ones): a GitHub token, an AWS key id, a Slack bot token, a database URL's password.
const GITHUB = 'ghp_R8kV2mQ7xW4zL9pT3nB6yH1cJ5dF0sA2gE7u';
const AWS = 'AKIAQ4Z7W2XK5M3N6P2Y';
const SLACK = 'xoxb-284716539021-4837261590384-Wq8Zr2Lx9Tk4Vm7Np3Yh6Bd1';
const DB_PASSWORD = 'Pq7-wR2xZ9kLm';
const ALL = [GITHUB, AWS, SLACK, DB_PASSWORD];

function filesContaining(dir: string, needles: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const bytes = fs.readFileSync(p);
        for (const n of needles) if (bytes.includes(n)) out.push(`${path.relative(dir, p)}: ${n.slice(0, 8)}…`);
      }
    }
  };
  walk(dir);
  return out;
}

describe('secrets: nothing enters the store unredacted', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;
  let t2: TestEngine | undefined;

  beforeEach(() => (dir = makeTmpDir('vox-secrets-store-')));
  afterEach(async () => {
    await t?.dispose();
    await t2?.dispose();
    t = t2 = undefined;
    await server?.close();
    server = undefined;
    forgetSecrets();
    removeTmpDir(dir);
  });

  it('a prompt, its title, the prompt history, the answer and a tool result hold no token; search finds none', async () => {
    const repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'config.env': `GITHUB_TOKEN=${GITHUB}\nDATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app\n` }));
    server = await startFakeOpenAI({
      responses: [toolCallTurn([{ name: 'read_file', args: { path: 'config.env' } }]), textTurn(`The bot token is ${SLACK} and the key id ${AWS}.`)],
    });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-test-unused-000000000000' }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    const db = path.join(dir, 'store');
    fs.mkdirSync(db);
    t = startTestEngine({ dir, workspaceRoot: repo, host, config: { dbPath: path.join(db, 'vox.db') } });
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: `${GITHUB} why does ${AWS} fail?` });
    await waitFor('the run to end', 30_000, async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'completed', 20);
    const thread = JSON.stringify(await c.call('getThread', { threadId }));
    for (const s of ALL) assert.ok(!thread.includes(s), `the thread shows ${s.slice(0, 8)}…`);
    assert.match(thread, /\[redacted\]/);
    const history = JSON.stringify(await c.call('listPromptHistory', {}));
    assert.ok(!history.includes(GITHUB) && history.includes('[redacted]'), history);
    for (const q of [GITHUB.slice(0, 12), AWS.slice(0, 10), SLACK.slice(0, 14), DB_PASSWORD]) {
      const hits = JSON.stringify(await c.call('searchThreads', { query: q }));
      for (const s of ALL) assert.ok(!hits.includes(s), `search for ${q} shows ${s.slice(0, 8)}…`);
    }
    await t.dispose();
    t = undefined;
    assert.deepEqual(filesContaining(db, ALL), [], 'no token in the database or its WAL');
  });

  it('a bundle holding tokens (written by hand or an older Vox) is imported redacted', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    fs.mkdirSync(a);
    fs.mkdirSync(b);
    server = await startFakeOpenAI({ responses: [textTurn('PLACEHOLDER-ANSWER-TEXT')] });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-test-unused-000000000000' }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    t = startTestEngine({ dir: a, host });
    const ca = t.client();
    const { threadId, runId } = await ca.call('sendPrompt', { threadId: null, prompt: 'PLACEHOLDER-PROMPT-TEXT' });
    await waitFor('the run to end', 30_000, async () => (await ca.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'completed', 20);
    const file = path.join(dir, 'bundle.json');
    await ca.call('exportBundle', { path: file });
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text.includes('PLACEHOLDER-ANSWER-TEXT') && text.includes('PLACEHOLDER-PROMPT-TEXT'));
    fs.writeFileSync(file, text.replaceAll('PLACEHOLDER-ANSWER-TEXT', `token ${GITHUB} and ${SLACK}`).replaceAll('PLACEHOLDER-PROMPT-TEXT', `use ${AWS}`));
    t2 = startTestEngine({ dir: b, host: new TestHost() });
    const cb = t2.client();
    await cb.call('importBundle', { path: file });
    const shown = JSON.stringify(await cb.call('getThread', { threadId }));
    assert.match(shown, /token \[redacted\] and \[redacted\]/);
    await t2.dispose();
    t2 = undefined;
    assert.deepEqual(filesContaining(b, ALL), []);
  });
});
