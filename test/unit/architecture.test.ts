/**
 * Enforces the layering of docs/ARCHITECTURE.md on the source tree itself. Each rule states its
 * reason; each is checked on the real import graph (no violation) and on the graph plus one
 * forbidden edge (the rule reports it), so none of them can pass by being unable to fail.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildImportGraph, findCycles, importsOf, violations, withEdge, type ImportGraph } from '../support/import-graph';

const ROOT = path.resolve(__dirname, '../..');
const graph = buildImportGraph(ROOT, ['src', 'webview/src']);

const isPackage = (to: string) => !to.includes('/') || to.startsWith('@') || to.startsWith('node:') || (!to.startsWith('src/') && !to.startsWith('webview/') && !to.startsWith('unresolved:'));
const isVscode = (to: string) => to === 'vscode' || to.startsWith('vscode/');
const under = (p: string, dir: string) => p.startsWith(`${dir}/`);

/** Engine folders from the bottom up; a module may import its own layer and the ones below, never above. */
const ENGINE_LAYERS: readonly string[][] = [
  ['platform', 'ids', 'git', 'terminal'],
  ['store', 'stream', 'providers', 'model', 'tools', 'approvals', 'host.ts'],
  ['agent', 'module.ts', 'connect', 'importers'],
  ['sanitize', 'salvage', 'permissions', 'plans', 'search', 'mcp-catalog', 'mcp-apps', 'handoff', 'conversation', 'ledger'],
  ['mcp', 'checkpoints', 'worktrees', 'runs', 'context', 'rules', 'compaction', 'guards'],
  ['variants', 'review', 'branches', 'bundles', 'forks'],
  ['session', 'services.ts'],
  ['engine.ts', 'modules.ts'],
];
/** The engine's infrastructure (layers 0 and 1): what the agent loop may build on. */
const INFRASTRUCTURE = new Set([...ENGINE_LAYERS[0]!, ...ENGINE_LAYERS[1]!]);
/** The store's own foundations: it may import these engine folders and nothing else of the engine. */
const STORE_MAY_IMPORT = new Set(['store', 'platform', 'ids']);

/** The engine folder (or top-level file) of a path, or null outside src/engine. */
function engineFolder(p: string): string | null {
  return under(p, 'src/engine') ? p.slice('src/engine/'.length).split('/')[0]! : null;
}

/**
 * The layer of a capability folder that is in no list but has a module.ts: above the capabilities it
 * may use (runs, checkpoints, variants, …), below the session — so a new capability needs no edit here.
 */
const NEW_CAPABILITY_LAYER = ENGINE_LAYERS.findIndex((l) => l.includes('variants'));

function isModuleFolder(folder: string): boolean {
  return fs.existsSync(path.join(ROOT, 'src/engine', folder, 'module.ts'));
}

function engineLayer(p: string): number | null {
  if (!under(p, 'src/engine')) return null;
  const first = p.slice('src/engine/'.length).split('/')[0]!;
  const i = ENGINE_LAYERS.findIndex((l) => l.includes(first));
  if (i < 0 && isModuleFolder(first)) return NEW_CAPABILITY_LAYER;
  return i < 0 ? -1 : i;
}

/** What src/extension and src/cli may import from the engine: its composition root and the types a host implements. */
const ENGINE_PUBLIC = [/^src\/engine\/engine\.ts$/, /^src\/engine\/host\.ts$/, /^src\/engine\/providers\/(registry|types)\.ts$/, /^src\/engine\/model\/[a-z-]+\.ts$/];

interface Rule {
  name: string;
  reason: string;
  forbidden(from: string, to: string): boolean;
  /** An edge this rule must report (the probe). */
  probe: [string, string];
}

const RULES: Rule[] = [
  {
    name: 'src/engine never imports vscode',
    reason: 'the engine runs in the CLI and in tests, where there is no VS Code API',
    forbidden: (from, to) => under(from, 'src/engine') && isVscode(to),
    probe: ['src/engine/runs/registry.ts', 'vscode'],
  },
  {
    name: 'src/protocol imports only src/protocol (and packages other than vscode)',
    reason: 'the protocol is the contract every client shares (webview, guest page, MCP bridge); it must not drag in the engine or an editor',
    forbidden: (from, to) => under(from, 'src/protocol') && (isVscode(to) || (!isPackage(to) && !under(to, 'src/protocol'))),
    probe: ['src/protocol/commands/runs.ts', 'src/engine/runs/registry.ts'],
  },
  {
    name: 'src/client imports only src/protocol',
    reason: 'the typed client must work wherever the protocol travels (in process, over a socket, in a browser)',
    forbidden: (from, to) => under(from, 'src/client') && (isVscode(to) || to.startsWith('node:') || (!isPackage(to) && !under(to, 'src/protocol') && !under(to, 'src/client'))),
    probe: ['src/client/engine-client.ts', 'src/engine/engine.ts'],
  },
  {
    name: 'the webview imports only src/protocol and its own modules',
    reason: 'it runs in a sandboxed browser frame: engine or extension code would not run there and must not be bundled into it',
    forbidden: (from, to) => under(from, 'webview/src') && (isVscode(to) || to.startsWith('node:') || (!isPackage(to) && !under(to, 'src/protocol') && !under(to, 'webview/src'))),
    probe: ['webview/src/lib/controller.ts', 'src/engine/store/store.ts'],
  },
  {
    name: 'src/extension and src/cli reach the engine only through its composition root and host types',
    reason: 'one way in: every capability is a protocol command, so a view or a CLI command never calls a service the guest page or an MCP client could not',
    forbidden: (from, to) => (under(from, 'src/extension') || under(from, 'src/cli')) && under(to, 'src/engine') && !ENGINE_PUBLIC.some((re) => re.test(to)),
    probe: ['src/cli/chat-command.ts', 'src/engine/store/store.ts'],
  },
  {
    name: 'src/mcp-server reaches the engine only through its composition root and host types',
    reason: 'Vox as an MCP server is a client of the protocol like the CLI: its tools call commands over a session with a narrow grant, so the engine checks every call (an MCP client must never reach a service directly)',
    forbidden: (from, to) => under(from, 'src/mcp-server') && under(to, 'src/engine') && !ENGINE_PUBLIC.some((re) => re.test(to)),
    probe: ['src/mcp-server/server.ts', 'src/engine/store/store.ts'],
  },
  {
    name: 'only src/cli and src/extension import src/mcp-server',
    reason: 'the MCP server is an outer client the CLI (`vox mcp serve`) and the extension (HTTP) start; the engine, the protocol and the views know nothing of it',
    forbidden: (from, to) => under(to, 'src/mcp-server') && !under(from, 'src/mcp-server') && !under(from, 'src/cli') && !under(from, 'src/extension'),
    probe: ['src/engine/engine.ts', 'src/mcp-server/server.ts'],
  },
  {
    name: 'nothing imports the extension or the CLI',
    reason: 'they are the outermost clients; anything they hold that others need belongs in the protocol or the engine',
    forbidden: (from, to) => !under(from, 'src/extension') && !under(from, 'src/cli') && (under(to, 'src/extension') || under(to, 'src/cli')),
    probe: ['src/engine/engine.ts', 'src/cli/connect.ts'],
  },
  {
    name: 'src/engine/agent imports no capability folder, only the infrastructure and the protocol',
    reason: 'the loop is call → review → tools → settle; capabilities shape a turn through its stages (agent/hooks.ts), so a new one never edits the loop',
    forbidden: (from, to) => engineFolder(from) === 'agent' && engineFolder(to) !== null && engineFolder(to) !== 'agent' && !INFRASTRUCTURE.has(engineFolder(to)!),
    probe: ['src/engine/agent/runner.ts', 'src/engine/salvage/turn-salvage.ts'],
  },
  {
    name: 'src/engine/store imports no domain folder',
    reason: 'the modules hand the store their migrations and projections (store/schema.ts); a store that imports a capability runs an arrow back up, a loop between folders no file-level check sees',
    forbidden: (from, to) => engineFolder(from) === 'store' && engineFolder(to) !== null && !STORE_MAY_IMPORT.has(engineFolder(to)!),
    probe: ['src/engine/store/projections.ts', 'src/engine/search/index-sync.ts'],
  },
  {
    name: 'engine layers: a lower layer never imports a higher one',
    reason: `layers bottom-up: ${ENGINE_LAYERS.map((l) => l.join(', ')).join(' < ')}; e.g. the agent loop knows nothing of checkpoints or variants, which hook into it`,
    forbidden: (from, to) => {
      const a = engineLayer(from);
      const b = engineLayer(to);
      return a !== null && b !== null && (a < 0 || b < 0 || b > a);
    },
    probe: ['src/engine/agent/runner.ts', 'src/engine/checkpoints/service.ts'],
  },
];

describe('architecture', () => {
  it('the import scanner catches each import form (so the rules below can see every edge)', () => {
    const tmp = path.join(ROOT, 'test', '.scan-probe.ts');
    fs.writeFileSync(tmp, `import * as a from 'vscode';\nconst b = require("vscode");\nconst c = import('vscode');\nimport 'vscode';\nimport type { X } from 'vscode';\nexport { y } from 'vscode';\n`);
    try {
      assert.deepEqual(importsOf(tmp), ['vscode', 'vscode', 'vscode', 'vscode', 'vscode', 'vscode']);
    } finally {
      fs.rmSync(tmp);
    }
  });

  it('every relative import resolves to a file', () => {
    assert.deepEqual(violations(graph, (_f, to) => to.startsWith('unresolved:')), []);
  });

  it('every engine folder is in a layer (a capability folder with a module.ts and no place in the list sits just below the session)', () => {
    const folders = fs.readdirSync(path.join(ROOT, 'src/engine'));
    assert.deepEqual(folders.filter((f) => !ENGINE_LAYERS.some((l) => l.includes(f)) && !isModuleFolder(f)), []);
    assert.equal(engineLayer('src/engine/some-new-capability/x.ts'), -1, 'a folder without a module.ts must be placed');
  });

  for (const rule of RULES) {
    it(`${rule.name} — because ${rule.reason}`, () => {
      assert.deepEqual(violations(graph, rule.forbidden), []);
      const probed: ImportGraph = withEdge(graph, rule.probe[0], rule.probe[1]);
      assert.deepEqual(violations(probed, rule.forbidden), [`${rule.probe[0]} → ${rule.probe[1]}`], 'the probe edge must be reported');
    });
  }

  it('no folder-level import loops in src/engine — because two folders that import each other are one capability in two places', () => {
    assert.deepEqual(folderCycles(graph), []);
    const probed = withEdge(graph, 'src/engine/store/store.ts', 'src/engine/runs/registry.ts');
    assert.ok(folderCycles(probed).some((c) => c.includes('store') && c.includes('runs')), 'the probe loop store ⇄ runs must be found');
  });

  it('every module declares the capability modules its folder imports, and only those', () => {
    assert.deepEqual(moduleDepMismatches(graph), []);
    const probed = withEdge(graph, 'src/engine/search/search.ts', 'src/engine/salvage/turn-salvage.ts');
    assert.deepEqual(moduleDepMismatches(probed), ['search imports salvage but does not declare it']);
  });

  it('no import cycles in src/ or webview/src — because a cycle makes two modules one and hides which owns what', () => {
    assert.deepEqual(findCycles(graph), []);
    const probed = withEdge(graph, 'src/engine/store/rows.ts', 'src/engine/store/store.ts');
    // The probe closes every loop through rows.ts (store and its read modules import it) into one component.
    const found = findCycles(probed);
    assert.equal(found.length, 1, 'the probe cycle must be found');
    for (const f of ['src/engine/store/rows.ts', 'src/engine/store/store.ts']) assert.ok(found[0]!.includes(f), `${f} is in the probe cycle`);
  });
});

/** Loops of engine folders: strongly connected components of the folder graph with more than one folder. */
function folderCycles(g: ImportGraph): string[][] {
  const folderEdges = new Map<string, string[]>();
  for (const [from, tos] of g.edges) {
    const a = engineFolder(from);
    if (!a) continue;
    const list = folderEdges.get(a) ?? [];
    for (const to of tos) {
      const b = engineFolder(to);
      if (b && b !== a && !list.includes(b)) list.push(b);
    }
    folderEdges.set(a, list);
  }
  return findCycles({ edges: folderEdges }).filter((c) => c.length > 1);
}

/** Capability folders with a module.ts: the deps each declares against the capability folders its files import. */
function moduleDepMismatches(g: ImportGraph): string[] {
  const moduleFolders = new Set([...g.edges.keys()].filter((p) => /^src\/engine\/[^/]+\/module\.ts$/.test(p)).map((p) => engineFolder(p)!));
  const out: string[] = [];
  for (const folder of [...moduleFolders].sort()) {
    const src = fs.readFileSync(path.join(ROOT, 'src/engine', folder, 'module.ts'), 'utf8');
    const declared = new Set(JSON.parse((/deps: (\[[^\]]*\])/.exec(src)?.[1] ?? '[]').replace(/'/g, '"')) as string[]);
    const imported = new Set<string>();
    for (const [from, tos] of g.edges) {
      if (engineFolder(from) !== folder) continue;
      for (const to of tos) {
        const b = engineFolder(to);
        if (b && b !== folder && moduleFolders.has(b)) imported.add(b);
      }
    }
    for (const d of [...imported].sort()) if (!declared.has(d)) out.push(`${folder} imports ${d} but does not declare it`);
    for (const d of [...declared].sort()) if (!imported.has(d)) out.push(`${folder} declares ${d} but imports nothing of it`);
  }
  return out;
}
