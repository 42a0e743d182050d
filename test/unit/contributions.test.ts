/**
 * package.json against the extension's contributions (src/extension/contributions.ts): every
 * contributed command is declared by one contribution and every declared command is contributed
 * (or listed in INTERNAL_COMMANDS with its reason); menus name only contributed commands; the
 * commands and each menu's entries sit in blocks by area, in the contributions' order. The
 * declarations are what registers: the installer refuses an undeclared id and fails on a declared
 * one left unregistered, and no source file registers a command any other way. Each check also
 * runs on a copy with one fault put in, and must report it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ExtensionContribution } from '../../src/extension/contribution';
import { requireWithoutVscode } from '../support/vscode-absent';

const ROOT = path.resolve(__dirname, '../..');
const EXTENSION_SRC = path.join(ROOT, 'src/extension');

/** Commands registered but deliberately left out of package.json (none today): id → why. */
const INTERNAL_COMMANDS: Readonly<Record<string, string>> = {};

interface Manifest {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
    keybindings: { command: string }[];
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;
const { CONTRIBUTIONS } = requireWithoutVscode<typeof import('../../src/extension/contributions')>(path.join(EXTENSION_SRC, 'contributions.ts'));
const contributions: readonly ExtensionContribution<unknown>[] = Object.values(CONTRIBUTIONS);

/** What a contribution declares: the command id → its index in the contributions' order. */
function owners(list: readonly Pick<ExtensionContribution<unknown>, 'name' | 'commands'>[]): { owner: Map<string, number>; problems: string[] } {
  const owner = new Map<string, number>();
  const problems: string[] = [];
  list.forEach((c, i) => {
    for (const id of c.commands) {
      if (owner.has(id)) problems.push(`${id} is declared by "${list[owner.get(id)!]!.name}" and "${c.name}"`);
      else owner.set(id, i);
    }
  });
  return { owner, problems };
}

/** Contributed ⇔ declared, with the internal exceptions (which must stay true). */
function commandMismatches(m: Manifest, list: readonly Pick<ExtensionContribution<unknown>, 'name' | 'commands'>[], internal: Readonly<Record<string, string>>): string[] {
  const { owner, problems } = owners(list);
  const contributed = new Set<string>();
  for (const { command } of m.contributes.commands) {
    if (contributed.has(command)) problems.push(`${command} is contributed twice`);
    contributed.add(command);
    if (!owner.has(command)) problems.push(`${command} is contributed but no contribution registers it`);
    if (command in internal) problems.push(`${command} is listed as internal but is contributed`);
  }
  for (const id of owner.keys()) if (!contributed.has(id) && !(id in internal)) problems.push(`${id} is registered but not contributed (nor listed as internal with a reason)`);
  for (const [id, reason] of Object.entries(internal)) {
    if (!owner.has(id)) problems.push(`${id} is listed as internal but no contribution registers it`);
    if (!reason.trim()) problems.push(`${id} is listed as internal without a reason`);
  }
  const menus = Object.entries(m.contributes.menus).flatMap(([where, entries]) => entries.map((e) => [where, e.command] as const));
  for (const [where, id] of [...menus, ...m.contributes.keybindings.map((k) => ['keybindings', k.command] as const)]) {
    if (!contributed.has(id)) problems.push(`${where} names ${id}, which is not contributed`);
  }
  return problems;
}

/** Entries out of their area's block: each entry's owner must be the previous entry's or a later one. */
function orderProblems(m: Manifest, list: readonly Pick<ExtensionContribution<unknown>, 'name' | 'commands'>[]): string[] {
  const { owner } = owners(list);
  const problems: string[] = [];
  const check = (where: string, ids: string[]) => {
    let last = -1;
    let lastId = '';
    for (const id of ids) {
      const i = owner.get(id);
      if (i === undefined) continue; // reported by commandMismatches
      if (i < last) problems.push(`${where}: ${id} ("${list[i]!.name}") comes after ${lastId} ("${list[last]!.name}")`);
      [last, lastId] = [i, id];
    }
  };
  check('commands', m.contributes.commands.map((c) => c.command));
  for (const [where, entries] of Object.entries(m.contributes.menus)) check(`menus.${where}`, entries.map((e) => e.command));
  return problems;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The one file that calls VS Code's command registration, and the one that hands it to the installer. */
const REGISTRAR = 'src/extension/guarded-command.ts';
const INSTALLER = 'src/extension/extension.ts';

/** Source files registering a command outside the contribution scope (rel path → text). */
function strayRegistrations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [rel, text] of files) {
    if (rel !== REGISTRAR && /\bregister(TextEditor)?Command\s*\(/.test(text)) problems.push(`${rel} calls vscode.commands.register…Command itself`);
    if (rel !== REGISTRAR && rel !== INSTALLER && /from '[./]+\/guarded-command'/.test(text)) problems.push(`${rel} uses guardedCommand instead of its contribution scope`);
  }
  return problems;
}

/** `vox.*` commands the extension runs itself (executeCommand, an item's `command`, the chat's host actions). */
function invokedCommands(files: ReadonlyMap<string, string>): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/executeCommand\(\s*'(vox\.[\w.]+)'/g, /\bcommand(?::|\s*=)\s*'(vox\.[\w.]+)'/g, /^\s*(?!commands\b)\w+:\s*\[\s*'(vox\.[\w.]+)'/gm];
  for (const [rel, text] of files) for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1]!, rel);
  return found;
}

const sources = new Map(sourceFiles(path.join(ROOT, 'src')).map((f) => [path.relative(ROOT, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')]));

describe('package.json and the extension contributions', () => {
  it('finds the contributions and package.json commands to compare', () => {
    assert.ok(contributions.length >= 10, `${contributions.length} contributions`);
    assert.ok(manifest.contributes.commands.length >= 50);
    for (const c of contributions) assert.ok(c.name && typeof c.activate === 'function', c.name);
  });

  it('every contributed command is registered by a contribution, and every registered one is contributed', () => {
    assert.deepEqual(commandMismatches(manifest, contributions, INTERNAL_COMMANDS), []);
  });

  it('reports a command dropped from package.json, from a declaration, or contributed twice', () => {
    const dropped: Manifest = { contributes: { ...manifest.contributes, commands: manifest.contributes.commands.filter((c) => c.command !== 'vox.checkpoint.prune') } };
    assert.deepEqual(commandMismatches(dropped, contributions, INTERNAL_COMMANDS).filter((p) => !p.startsWith('menus') && !p.includes(' names ')), [
      'vox.checkpoint.prune is registered but not contributed (nor listed as internal with a reason)',
    ]);
    assert.ok(commandMismatches(dropped, contributions, INTERNAL_COMMANDS).includes('view/title names vox.checkpoint.prune, which is not contributed'));
    const undeclared = contributions.map((c) => ({ name: c.name, commands: c.commands.filter((id) => id !== 'vox.mcp.add') }));
    assert.deepEqual(commandMismatches(manifest, undeclared, INTERNAL_COMMANDS), ['vox.mcp.add is contributed but no contribution registers it']);
    const twice: Manifest = { contributes: { ...manifest.contributes, commands: [...manifest.contributes.commands, { command: 'vox.stop' }] } };
    assert.deepEqual(commandMismatches(twice, contributions, INTERNAL_COMMANDS), ['vox.stop is contributed twice']);
  });

  it('an internal command must be registered, have a reason, and stay out of package.json', () => {
    const withInternal = [...contributions, { name: 'probe', commands: ['vox.probe.internal'] }];
    assert.deepEqual(commandMismatches(manifest, withInternal, {}), ['vox.probe.internal is registered but not contributed (nor listed as internal with a reason)']);
    assert.deepEqual(commandMismatches(manifest, withInternal, { 'vox.probe.internal': 'called by the chat only' }), []);
    assert.deepEqual(commandMismatches(manifest, withInternal, { 'vox.probe.internal': ' ' }), ['vox.probe.internal is listed as internal without a reason']);
    assert.deepEqual(commandMismatches(manifest, contributions, { 'vox.stop': 'probe' }), ['vox.stop is listed as internal but is contributed']);
    assert.deepEqual(commandMismatches(manifest, contributions, { 'vox.gone': 'probe' }), ['vox.gone is listed as internal but no contribution registers it']);
  });

  it('no command is declared by two contributions (probe: one declared twice is reported)', () => {
    assert.deepEqual(owners(contributions).problems, []);
    const doubled = [...contributions, { name: 'probe', commands: ['vox.stop'] }];
    assert.deepEqual(owners(doubled).problems, ['vox.stop is declared by "chat, model and settings commands" and "probe"']);
  });

  it('package.json lists commands and menu entries by area, in the contributions\' order', () => {
    assert.deepEqual(orderProblems(manifest, contributions), []);
    const commands = [...manifest.contributes.commands];
    const moved = commands.splice(commands.findIndex((c) => c.command === 'vox.mcp.add'), 1);
    const misplaced: Manifest = { contributes: { ...manifest.contributes, commands: [...moved, ...commands] } };
    assert.deepEqual(orderProblems(misplaced, contributions), ['commands: vox.focusChat ("chat, model and settings commands") comes after vox.mcp.add ("MCP servers view")']);
  });

  it('commands are registered only through a contribution scope (probe: a stray registration is reported)', () => {
    assert.ok(sources.get(REGISTRAR)?.includes('vscode.commands.registerCommand('), `${REGISTRAR} registers the commands`);
    assert.deepEqual(strayRegistrations(sources), []);
    const stray = new Map(sources).set('src/extension/stray.ts', "import { guardedCommand } from './guarded-command';\nvscode.commands.registerCommand('vox.stray', () => undefined);");
    assert.deepEqual(strayRegistrations(stray), ['src/extension/stray.ts calls vscode.commands.register…Command itself', 'src/extension/stray.ts uses guardedCommand instead of its contribution scope']);
  });

  it('every vox command the extension runs itself is declared by a contribution', () => {
    const { owner } = owners(contributions);
    const invoked = invokedCommands(sources);
    assert.ok(invoked.has('vox.selectModel') && invoked.has('vox.review.changes'), `found ${[...invoked.keys()].join(', ')}`);
    assert.deepEqual([...invoked].filter(([id]) => !owner.has(id)).map(([id, rel]) => `${rel} runs ${id}`), []);
    const typo = new Map(sources).set('src/extension/typo.ts', "await vscode.commands.executeCommand('vox.focusChatt');");
    assert.deepEqual([...invokedCommands(typo)].filter(([id]) => !owner.has(id)).map(([id, rel]) => `${rel} runs ${id}`), ['src/extension/typo.ts runs vox.focusChatt']);
  });
});
