/**
 * `vox mcp list|tools|restart|enable|disable` as real processes against a real temp workspace
 * whose `.mcp.json` names the test stdio MCP server: text and --json output, the choices kept in
 * $VOX_HOME/mcp-settings.json across processes, typed errors for unknown servers and tools.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { STDIO_SERVER } from '../support/mcp/rig';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('CLI: vox mcp', function () {
  this.timeout(120_000);
  let dir: string;
  let ws: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    dir = makeTmpDir();
    ws = fs.realpathSync(path.join(dir));
    fs.mkdirSync(path.join(ws, 'proj'));
    ws = path.join(ws, 'proj');
    fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [STDIO_SERVER] }, broken: { type: 'ftp' } } }));
    env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
  });
  afterEach(() => removeTmpDir(dir));

  it('list, tools, disable a tool and a server (kept across processes), enable, restart; typed errors', async () => {
    const list = await runVox(['mcp', 'list', '--cwd', ws], env);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^t {2}\[connected\] {2}stdio .*stdio-server\.mjs {2}\(\.mcp\.json\)$/m);
    assert.match(list.out, /^config: \.mcp\.json: mcpServers\.broken: server "broken" was skipped: unknown "type"/m);
    const json = JSON.parse((await runVox(['mcp', 'list', '--cwd', ws, '--json'], env)).out);
    assert.equal(json.servers[0].status, 'connected');

    const tools = await runVox(['mcp', 'tools', 't', '--cwd', ws], env);
    assert.equal(tools.code, 0, tools.err);
    assert.match(tools.out, /^mcp__t__echo {2}\[read\] {2}Echoes the message back/m);
    assert.match(tools.out, /^mcp__t__write_note {2}\[execute\]/m);

    const off = await runVox(['mcp', 'disable', 't', '--tool', 'write_note', '--cwd', ws, '--json'], env);
    assert.equal(off.code, 0, off.err);
    assert.equal(JSON.parse(off.out).tools.find((x: { name: string }) => x.name === 'write_note').enabled, false);
    assert.match((await runVox(['mcp', 'tools', 't', '--cwd', ws], env)).out, /^mcp__t__write_note {2}\[execute, disabled\]/m, 'kept for the next process');

    const dis = await runVox(['mcp', 'disable', 't', '--cwd', ws], env);
    assert.equal(dis.code, 0, dis.err);
    assert.match((await runVox(['mcp', 'list', '--cwd', ws], env)).out, /^t {2}\[disabled\]/m);
    assert.equal((await runVox(['mcp', 'enable', 't', '--cwd', ws], env)).code, 0);
    const restarted = await runVox(['mcp', 'restart', 't', '--cwd', ws, '--json'], env);
    assert.equal(restarted.code, 0, restarted.err);
    assert.deepEqual([JSON.parse(restarted.out).status, JSON.parse(restarted.out).restarts], ['connected', 1]);

    const unknown = await runVox(['mcp', 'tools', 'nope', '--cwd', ws], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /McpError \(unknownServer\): No MCP server named "nope"\. Configured: t\./);
    const badTool = await runVox(['mcp', 'enable', 't', '--tool', 'nope', '--cwd', ws], env);
    assert.equal(badTool.code, 1);
    assert.match(badTool.err, /McpError \(unknownTool\)/);
    const help = await runVox(['mcp', 'disable', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.out, /--tool <name>/);
  });
});
