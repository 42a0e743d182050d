/**
 * MCP server config (src/engine/mcp/config.ts): the three file formats and the setting, their
 * variables, precedence and shadowing, and every kind of bad input as a configErrors entry that
 * leaves the rest usable. Plus the tool-name rules of src/engine/mcp/tools.ts.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  describeTarget, loadMcpConfig, specSecrets, mergeMcpSources, parseClaudeConfig, parseEnvFile, parseSettingsServers, parseVoxConfig, parseVscodeConfig, stripJsonc,
  MAX_CONFIG_FILE_BYTES, type McpServerSpec, type ParseContext,
} from '../../src/engine/mcp/config';
import { boundResult, flattenResult, qualifiedToolName, MAX_TOOL_NAME_CHARS } from '../../src/engine/mcp/tools';
import { restartDelay } from '../../src/engine/mcp/connection';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ctx: ParseContext = { workspaceRoot: '/ws', env: { TOKEN: 'tok-123', EMPTY: '' }, home: '/home/u', readEnvFile: () => ({ FROM_FILE: '1' }) };
const stdio = (s: McpServerSpec) => {
  assert.equal(s.transport, 'stdio');
  return s as Extract<McpServerSpec, { transport: 'stdio' }>;
};
const remote = (s: McpServerSpec) => {
  assert.notEqual(s.transport, 'stdio');
  return s as Extract<McpServerSpec, { transport: 'http' | 'sse' }>;
};

describe('MCP config: Claude Code .mcp.json', () => {
  it('reads stdio, http and sse servers with ${VAR} and ${VAR:-default}', () => {
    const r = parseClaudeConfig(JSON.stringify({
      mcpServers: {
        gh: { command: 'npx', args: ['-y', 'server-${TOKEN}'], env: { KEY: '${TOKEN}', D: '${MISSING:-dflt}', E: '${EMPTY:-e}' } },
        web: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        old: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
      },
    }), ctx);
    assert.deepEqual(r.errors, []);
    const gh = stdio(r.servers[0]!);
    assert.deepEqual([gh.name, gh.source, gh.sourcePath, gh.command, gh.args, gh.env, gh.cwd], ['gh', 'claude', '.mcp.json', 'npx', ['-y', 'server-tok-123'], { KEY: 'tok-123', D: 'dflt', E: 'e' }, null]);
    const web = remote(r.servers[1]!);
    assert.deepEqual([web.transport, web.url, web.headers], ['http', 'https://example.com/mcp', { Authorization: 'Bearer tok-123' }]);
    assert.equal(remote(r.servers[2]!).transport, 'sse');
  });

  it('an unset ${VAR} without a default skips that server with a clear error; the others stay', () => {
    const r = parseClaudeConfig(JSON.stringify({ mcpServers: { a: { command: 'x', env: { K: '${NOPE}' } }, b: { command: 'y' } } }), ctx);
    assert.deepEqual(r.servers.map((s) => s.name), ['b']);
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0]!.source, '.mcp.json: mcpServers.a');
    assert.match(r.errors[0]!.message, /NOPE is not set/);
  });

  it('refuses comments (Claude Code reads strict JSON) but names the file', () => {
    const r = parseClaudeConfig('{ // no\n "mcpServers": {} }', ctx);
    assert.equal(r.servers.length, 0);
    assert.match(r.errors[0]!.message, /not valid JSON/);
    assert.equal(r.errors[0]!.source, '.mcp.json');
  });

  const bad: Array<[string, string, RegExp]> = [
    ['not an object', '[1,2]', /must hold a JSON object/],
    ['no mcpServers', '{"servers": {}}', /no "mcpServers"/],
    ['mcpServers not an object', '{"mcpServers": []}', /must be an object of servers/],
    ['server not an object', '{"mcpServers": {"a": 3}}', /must be an object/],
    ['no command', '{"mcpServers": {"a": {"args": []}}}', /needs a "command"/],
    ['empty command', '{"mcpServers": {"a": {"command": "  "}}}', /needs a "command"/],
    ['args not strings', '{"mcpServers": {"a": {"command": "x", "args": [{}]}}}', /"args" must be an array of strings/],
    ['env not an object', '{"mcpServers": {"a": {"command": "x", "env": "K=V"}}}', /"env" must be an object/],
    ['env value object', '{"mcpServers": {"a": {"command": "x", "env": {"K": {}}}}}', /"env.K" must be a string/],
    ['unknown type', '{"mcpServers": {"a": {"type": "ws", "url": "ws://x"}}}', /unknown "type"/],
    ['http without url', '{"mcpServers": {"a": {"type": "http"}}}', /needs a "url"/],
    ['bad url', '{"mcpServers": {"a": {"type": "http", "url": "not a url"}}}', /not a valid URL/],
    ['file url', '{"mcpServers": {"a": {"type": "http", "url": "file:///etc/passwd"}}}', /must be http or https/],
    ['headers not strings', '{"mcpServers": {"a": {"type": "http", "url": "http://x", "headers": {"h": []}}}}', /"headers.h" must be a string/],
    ['name with a slash', '{"mcpServers": {"a/b": {"command": "x"}}}', /without "\/"/],
    ['empty name', '{"mcpServers": {"": {"command": "x"}}}', /1\.\.\d+ characters/],
    ['truncated JSON', '{"mcpServers": {"a": {"command": ', /not valid JSON/],
  ];
  for (const [what, text, re] of bad) {
    it(`bad input: ${what} → an invalidConfig entry`, () => {
      const r = parseClaudeConfig(text, ctx);
      assert.equal(r.servers.length, 0);
      assert.equal(r.errors.length, 1, JSON.stringify(r.errors));
      assert.match(r.errors[0]!.message, re);
    });
  }

  it('one bad entry among good ones: the good ones are used', () => {
    const r = parseClaudeConfig(JSON.stringify({ mcpServers: { a: { command: 'x' }, b: 42, c: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }), ctx);
    assert.deepEqual(r.servers.map((s) => s.name), ['a', 'c']);
    assert.equal(r.errors.length, 1);
  });
});

describe('MCP config: VS Code .vscode/mcp.json', () => {
  it('reads JSONC (comments, trailing commas), ${workspaceFolder}, ${env:X}, ${userHome}, envFile and cwd', () => {
    const text = `{
      // servers for this repo
      "inputs": [],
      "servers": {
        "fs": { "type": "stdio", "command": "node", "args": ["\${workspaceFolder}/srv.js", "--home=\${userHome}",], "env": { "T": "\${env:TOKEN}" }, "envFile": ".env", "cwd": "sub" },
        /* remote */ "remote": { "type": "http", "url": "https://h.example/mcp", "headers": { "X": "a // not a comment" } },
        "inferred": { "command": "srv" },
      },
    }`;
    const r = parseVscodeConfig(text, ctx);
    assert.deepEqual(r.errors, []);
    const fsSrv = stdio(r.servers[0]!);
    assert.deepEqual([fsSrv.source, fsSrv.args, fsSrv.env, fsSrv.cwd], ['vscode', ['/ws/srv.js', '--home=/home/u'], { FROM_FILE: '1', T: 'tok-123' }, path.resolve('/ws', 'sub')]);
    assert.deepEqual(remote(r.servers[1]!).headers, { X: 'a // not a comment' });
    assert.equal(stdio(r.servers[2]!).command, 'srv');
  });

  it('${input:…} is a clear per-server error; the other servers stay', () => {
    const r = parseVscodeConfig(JSON.stringify({ inputs: [{ id: 'key', type: 'promptString' }], servers: { a: { command: 'x', env: { K: '${input:key}' } }, b: { command: 'y' } } }), ctx);
    assert.deepEqual(r.servers.map((s) => s.name), ['b']);
    assert.match(r.errors[0]!.message, /\$\{input:key\} asks VS Code for an input, which Vox does not support/);
    assert.equal(r.errors[0]!.source, '.vscode/mcp.json: servers.a');
  });

  it('an unreadable envFile and an unknown variable are per-server errors', () => {
    const failing: ParseContext = { ...ctx, readEnvFile: () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }); } };
    const r = parseVscodeConfig(JSON.stringify({ servers: { a: { command: 'x', envFile: '.env.missing' }, b: { command: '${command:pick}' } } }), failing);
    assert.equal(r.servers.length, 0);
    assert.match(r.errors[0]!.message, /envFile.*could not be read \(ENOENT\)/);
    assert.match(r.errors[1]!.message, /unsupported variable \$\{command:pick\}/);
  });

  it('the mcpServers shape is not VS Code\'s: a clear error', () => {
    assert.match(parseVscodeConfig('{"mcpServers": {}}', ctx).errors[0]!.message, /no "servers"/);
  });

  it('stripJsonc keeps strings intact (slashes, escaped quotes, commas before brackets inside strings)', () => {
    const s = '{"a": "x // y /* z */", "b": "q\\" ,}", /* c */ "c": [1, 2,], }';
    assert.deepEqual(JSON.parse(stripJsonc(s)), { a: 'x // y /* z */', b: 'q" ,}', c: [1, 2] });
  });
});

describe('MCP config: .vox/mcp.json and the setting', () => {
  it('.vox/mcp.json: the mcpServers shape, comments allowed, both variable families', () => {
    const r = parseVoxConfig('{ /* vox */ "mcpServers": { "a": { "command": "${workspaceFolder}/bin", "env": { "T": "${TOKEN}", "U": "${env:TOKEN}" } } } }', ctx);
    assert.deepEqual(r.errors, []);
    const a = stdio(r.servers[0]!);
    assert.deepEqual([a.source, a.command, a.env], ['vox', '/ws/bin', { T: 'tok-123', U: 'tok-123' }]);
  });

  it('settings: the inner object (or a whole {mcpServers}); bad values are errors naming the setting', () => {
    assert.deepEqual(parseSettingsServers({ s: { command: 'x' } }, ctx).servers.map((s) => [s.name, s.source, s.sourcePath]), [['s', 'settings', 'settings (vox.mcp.servers)']]);
    assert.deepEqual(parseSettingsServers({ mcpServers: { s: { command: 'x' } } }, ctx).servers.map((s) => s.name), ['s']);
    assert.deepEqual(parseSettingsServers(undefined, ctx), { servers: [], errors: [] });
    const r = parseSettingsServers('nope', ctx);
    assert.equal(r.errors[0]!.source, 'settings (vox.mcp.servers): vox.mcp.servers');
  });

  it('precedence: vox beats vscode beats claude beats settings; the shadowed are reported', () => {
    const merged = mergeMcpSources([
      parseVoxConfig('{"mcpServers": {"a": {"command": "vox-a"}}}', ctx),
      parseVscodeConfig('{"servers": {"a": {"command": "vscode-a"}, "b": {"command": "vscode-b"}}}', ctx),
      parseClaudeConfig('{"mcpServers": {"b": {"command": "claude-b"}, "c": {"command": "claude-c"}}}', ctx),
      parseSettingsServers({ c: { command: 'settings-c' }, d: { command: 'settings-d' } }, ctx),
    ]);
    assert.deepEqual(merged.servers.map((s) => [s.name, stdio(s).command]), [['a', 'vox-a'], ['b', 'vscode-b'], ['c', 'claude-c'], ['d', 'settings-d']]);
    assert.deepEqual(merged.shadowed, [
      { name: 'a', sourcePath: '.vscode/mcp.json', by: '.vox/mcp.json' },
      { name: 'b', sourcePath: '.mcp.json', by: '.vscode/mcp.json' },
      { name: 'c', sourcePath: 'settings (vox.mcp.servers)', by: '.mcp.json' },
    ]);
  });

  it('envFile lines: comments, export, quotes', () => {
    assert.deepEqual(parseEnvFile('# c\nexport A=1\nB = "two words"\nC=\'x\'\nnot a line\n'), { A: '1', B: 'two words', C: 'x' });
  });

  it('describeTarget hides credential flags; specSecrets finds the values to redact', () => {
    const [s] = parseClaudeConfig(JSON.stringify({ mcpServers: { a: { command: 'srv', args: ['--api-key=abcdefgh123', '--token', 'tok-secret-9', '--port', '80'], env: { GITHUB_TOKEN: 'ghp_12345678', PLAIN: 'yes' } } } }), ctx).servers;
    assert.equal(describeTarget(s!), 'srv --api-key=… --token … --port 80');
    assert.deepEqual(specSecrets(s!), ['ghp_12345678', 'abcdefgh123', 'tok-secret-9']);
    const [h] = parseClaudeConfig(JSON.stringify({ mcpServers: { h: { type: 'http', url: 'http://x/mcp', headers: { Authorization: 'Bearer sekret-value', Accept: 'x' } } } }), ctx).servers;
    assert.deepEqual(specSecrets(h!), ['sekret-value']);
  });

  it('describeTarget hides URL credentials and query values', () => {
    const [s] = parseClaudeConfig('{"mcpServers": {"a": {"type": "http", "url": "https://user:pw@h.example/mcp?key=secret"}}}', ctx).servers;
    assert.equal(describeTarget(s!), 'https://h.example/mcp?key=%E2%80%A6');
  });
});

describe('MCP config: loadMcpConfig on a real workspace', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir('vox-mcp-config-')));
  afterEach(() => removeTmpDir(dir));

  it('reads all three files and the setting; a broken file is an error, the rest used', () => {
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.mkdirSync(path.join(dir, '.vscode'));
    fs.writeFileSync(path.join(dir, '.vox/mcp.json'), '{"mcpServers": {"v": {"command": "v"}}}');
    fs.writeFileSync(path.join(dir, '.vscode/mcp.json'), '{ "servers": { "c": { "command": "c", "envFile": "${workspaceFolder}/.env" } }, }');
    fs.writeFileSync(path.join(dir, '.env'), 'FROM_ENV_FILE=yes\n');
    fs.writeFileSync(path.join(dir, '.mcp.json'), '{"mcpServers": {"cl": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}');
    const cfg = loadMcpConfig(dir, { s: { command: 's' } }, {});
    assert.deepEqual(cfg.configErrors, []);
    assert.deepEqual(cfg.servers.map((s) => [s.name, s.source]), [['v', 'vox'], ['c', 'vscode'], ['cl', 'claude'], ['s', 'settings']]);
    assert.deepEqual(stdio(cfg.servers[1]!).env, { FROM_ENV_FILE: 'yes' });

    fs.writeFileSync(path.join(dir, '.mcp.json'), '{broken');
    fs.writeFileSync(path.join(dir, '.vox/mcp.json'), 'x'.repeat(MAX_CONFIG_FILE_BYTES + 1));
    const again = loadMcpConfig(dir, undefined, {});
    assert.deepEqual(again.servers.map((s) => s.name), ['c']);
    assert.deepEqual(again.configErrors.map((e) => e.source), ['.vox/mcp.json', '.mcp.json']);
    assert.match(again.configErrors[0]!.message, /larger than/);
  });

  it('a directory where a file should be is an error, not a crash', () => {
    fs.mkdirSync(path.join(dir, '.mcp.json'));
    const cfg = loadMcpConfig(dir, undefined, {});
    assert.match(cfg.configErrors[0]!.message, /not a regular file/);
  });

  it('no files, no setting: nothing, no errors', () => {
    assert.deepEqual(loadMcpConfig(dir, undefined, {}), { servers: [], shadowed: [], configErrors: [] });
  });
});

describe('MCP tool names and results', () => {
  it('mcp__server__tool, sanitised, at most 64 characters, unique', () => {
    assert.equal(qualifiedToolName('git hub', 'create.issue', new Set()), 'mcp__git_hub__create_issue');
    const long = qualifiedToolName('s'.repeat(50), 't'.repeat(50), new Set());
    assert.ok(long.length <= MAX_TOOL_NAME_CHARS && /^[a-zA-Z0-9_-]+$/.test(long), long);
    assert.notEqual(qualifiedToolName('s'.repeat(50), 'u'.repeat(50), new Set()), long, 'long names differ by their hash');
    assert.equal(qualifiedToolName('a.b', 'x', new Set(['mcp__a_b__x'])), 'mcp__a_b__x_2');
  });

  it('results flatten to text; a 5 MB text is cut to the budget with a note', () => {
    const r = flattenResult({ content: [
      { type: 'text', text: 'hi' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///a', text: 'body' } }, { type: 'resource_link', uri: 'file:///b', name: 'b' },
      { type: 'resource', resource: { uri: 'ui://x/y', mimeType: 'text/html;profile=mcp-app', text: '<p>app</p>' } },
    ] });
    assert.equal(r.text, 'hi\n[image image/png, 3 bytes]\n[resource file:///a]\nbody\n[resource file:///b (b)]\n[interactive view ui://x/y shown to the user]');
    assert.deepEqual(r.embeddedApp, { uri: 'ui://x/y', html: '<p>app</p>' });
    const cut = boundResult('y'.repeat(5 * 1024 * 1024), 1000);
    assert.equal(cut.length, 1000);
    assert.match(cut, /MCP result cut: 5,242,880 characters/);
    assert.equal(flattenResult({ content: [], structuredContent: { a: 1 } }).text, '{"a":1}');
  });

  it('restart backoff doubles and is capped', () => {
    const b = { baseMs: 100, maxMs: 1000, maxAttempts: 5 };
    assert.deepEqual([0, 1, 2, 3, 4, 10].map((n) => restartDelay(n, b)), [100, 200, 400, 800, 1000, 1000]);
  });
});
