/**
 * Config files changed outside the editor are seen: a separate process (a terminal, in effect)
 * writes `.vscode/mcp.json` (its folder created, the file replaced by rename), `.mcp.json` (in
 * place) and `.vox/permissions.json`, and the engine — with no editor save, no host event —
 * starts and stops the MCP servers they name, tells its clients the permissions changed and
 * reports a broken rule file at once; `reloadMcpConfig` reads the files on demand. Real engine,
 * real SQLite, real stdio MCP server (test/support/mcp/stdio-server.mjs), real fs.watch.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineClient } from '../../src/client/engine-client';
import type { EngineUpdate } from '../../src/protocol/updates';
import { STDIO_SERVER } from '../support/mcp/rig';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** How long a change on disk may take to reach the engine (the watch's debounce is 100 ms; a loaded machine is slow). */
const SEEN_WITHIN_MS = 15_000;

/** Runs `script` in a separate Node process in `cwd` (the write comes from another process, as from a terminal). */
function inAnotherProcess(cwd: string, script: string): void {
  execFileSync(process.execPath, ['-e', script], { cwd, stdio: 'pipe', timeout: 30_000 });
}

const stdioServers = (names: string[]) => Object.fromEntries(names.map((n) => [n, { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] }]));

describe('config files written by another process are seen without an editor save', function () {
  this.timeout(120_000);
  let dir: string;
  let ws: string;
  let t: TestEngine;
  let client: EngineClient;

  beforeEach(() => {
    dir = makeTmpDir('vox-config-watch-');
    ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    t = startTestEngine({ dir, workspaceRoot: ws });
    client = t.client();
  });
  afterEach(async () => {
    await t.dispose();
    removeTmpDir(dir);
  });

  const names = async () => (await client.call('listMcpServers', {})).servers.map((s) => s.name).sort();

  it('.vscode/mcp.json (folder created later, file replaced by rename) and .mcp.json (written in place) start and stop servers', async () => {
    assert.deepEqual(await names(), [], 'nothing configured yet');
    // mkdir .vscode, write a temporary file beside it, rename it over mcp.json (how editors and many tools save).
    const vscodeJson = JSON.stringify({ servers: stdioServers(['probe']) });
    inAnotherProcess(ws, `const fs=require('fs');fs.mkdirSync('.vscode');fs.writeFileSync('.vscode/mcp.json.tmp',${JSON.stringify(vscodeJson)});fs.renameSync('.vscode/mcp.json.tmp','.vscode/mcp.json');`);
    await waitFor('probe listed', SEEN_WITHIN_MS, async () => (await names()).includes('probe'), { detail: () => 'listMcpServers never showed probe' });
    const probe = await waitFor('probe connected', SEEN_WITHIN_MS, async () => (await client.call('listMcpServers', {})).servers.find((s) => s.name === 'probe' && s.status === 'connected'));
    assert.ok(probe.tools.length > 0, 'its tools are listed');

    inAnotherProcess(ws, `require('fs').writeFileSync('.mcp.json', ${JSON.stringify(JSON.stringify({ mcpServers: stdioServers(['second']) }))});`);
    await waitFor('second listed', SEEN_WITHIN_MS, async () => (await names()).join() === 'probe,second');

    inAnotherProcess(ws, "require('fs').rmSync('.vscode/mcp.json');");
    await waitFor('probe gone', SEEN_WITHIN_MS, async () => (await names()).join() === 'second');
    assert.equal(t.host.notices.filter((n) => n.level === 'error').length, 0);
  });

  it('.vox/permissions.json: clients hear of the change, the new rules are in force, a broken file is reported at once', async () => {
    const out: EngineUpdate[] = [];
    const session = t.session(out);
    try {
      assert.equal((await client.call('getPermissions', {})).rules.filter((r) => r.origin !== 'settings (vox.permissionRules)').length, 0);
      const settingsUpdates = () => out.filter((u) => u.type === 'settings').length;
      const before = settingsUpdates();
      const rules = JSON.stringify({ rules: [{ action: 'allow', command: 'npm test' }] });
      inAnotherProcess(ws, `const fs=require('fs');fs.mkdirSync('.vox');fs.writeFileSync('.vox/permissions.json',${JSON.stringify(rules)});`);
      await waitFor('a settings update', SEEN_WITHIN_MS, () => settingsUpdates() > before, { detail: () => `updates: ${out.map((u) => u.type).join(', ')}` });
      const view = await client.call('getPermissions', {});
      assert.ok(view.rules.some((r) => r.command === 'npm test' && r.action === 'allow'), JSON.stringify(view.rules));

      inAnotherProcess(ws, "require('fs').writeFileSync('.vox/permissions.json', '{\"rules\": [{\"action\": \"allow\", \"comand\": \"npm test\"}]}');");
      await waitFor('the broken file reported', SEEN_WITHIN_MS, () => t.host.notices.find((n) => n.source === 'permissions' && /permissions\.json/.test(n.message)));
      const broken = await client.call('getPermissions', {});
      assert.ok(broken.errors.length > 0, 'the typed error is in the view');
    } finally {
      session.dispose();
    }
  });

  it('reloadMcpConfig reads the files again on demand and answers the list', async () => {
    assert.deepEqual((await client.call('reloadMcpConfig', {})).servers, []);
    fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: stdioServers(['asked']) }));
    const listed = await client.call('reloadMcpConfig', {});
    assert.deepEqual(listed.servers.map((s) => s.name), ['asked'], 'in the answer itself, not after a watch');
  });
});
