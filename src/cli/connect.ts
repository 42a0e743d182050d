/**
 * How a CLI command reaches the engine: an engine on $VOX_HOME/vox.db for the given workspace,
 * with a host that reads keys and endpoints from the environment, and a protocol client of it
 * holding the owner grant. Every command goes through that client, like the VS Code views do.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineClient, inProcessTransport } from '../client/engine-client';
import { createEngine, findRipgrep, voxDatabasePath, voxHome, withHomeDatabase, type Engine, type EngineConfig } from '../engine/engine';
import { isVoxError } from '../protocol/wire/vox-error';
import { cliMcpSettings } from './mcp-settings';
import { environmentHost } from '../engine/host';
import { DEFAULT_MODEL_REF } from '../engine/providers/registry';
import { demoModelPath } from '../engine/model/demo-model';
import { ownerGrant } from '../protocol/commands/grants';

/** Walks up from this file to the package root (works from src/ under tsx and from dist/). */
export function packageRoot(start = __dirname): string {
  for (let d = start; ; d = path.dirname(d)) {
    const pj = path.join(d, 'package.json');
    if (fs.existsSync(pj) && (JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'vox') return d;
    if (path.dirname(d) === d) return path.resolve(start, '..');
  }
}

/** $VOX_HOME, else ~/.vox: the same folder, from the same function, as the VS Code extension's. */
export { voxHome };

export interface Connected { engine: Engine; client: EngineClient }

export interface ConnectOptions {
  cwd: string;
  /** Automatic checkpoints around the agent's edits (chat); off for `vox checkpoint`, which captures by hand. */
  autoCheckpoints?: boolean;
  model?: string;
  /** Which queued prompts this engine starts (runs/queue.ts); `vox chat` runs only its own. */
  queuePolicy?: 'all' | 'own';
  /** A reading command: when the database cannot be written, open it read-only (with a note) instead of failing. */
  reading?: boolean;
  /** The permission mode of this process (`vox chat --mode`, else $VOX_PERMISSION_MODE); the engine validates it. */
  permissionMode?: string;
}

export function connect(opts: ConnectOptions): Connected {
  const engine = openEngine(opts);
  const client = new EngineClient(inProcessTransport((sink) => engine.connect(sink, ownerGrant('vox CLI'))), 'cli');
  acceptShortThreadIds(client);
  return { engine, client };
}

/**
 * Every command's `threadId` may be a short id (what `vox search` prints): before the call, the
 * protocol resolves it (`resolveThreadId`); a reference no thread matches goes on as given (the
 * command says notFound, or creates a thread of that id where it does), several is
 * `store/ambiguousId`.
 */
function acceptShortThreadIds(client: EngineClient): void {
  const call = client.call.bind(client);
  const resolving: typeof client.call = async (type, params) => {
    const ref = (params as { threadId?: unknown } | undefined)?.threadId;
    if (type === 'resolveThreadId' || typeof ref !== 'string' || ref.includes(':')) return call(type, params);
    const { threadId } = await call('resolveThreadId', { ref });
    return call(type, threadId === null ? params : { ...params, threadId } as typeof params);
  };
  client.call = resolving;
}

/** The engine a CLI command runs (no client yet): `connect` adds the owner's; `vox mcp serve` an MCP caller's narrower one. */
export function openEngine(opts: ConnectOptions): Engine {
  const env = process.env;
  const mode = opts.permissionMode ?? (env.VOX_PERMISSION_MODE || undefined);
  // Extra protected paths (the CLI's vox.protectedPaths): globs separated like PATH; validated by the engine.
  const protectedPaths = env.VOX_PROTECTED_PATHS ? env.VOX_PROTECTED_PATHS.split(path.delimiter).filter((g) => g !== '') : undefined;
  const permissions = mode || protectedPaths ? { ...(mode ? { mode } : {}), ...(protectedPaths ? { protectedPaths } : {}) } : undefined;
  const workspaceRoot = fs.realpathSync(opts.cwd);
  // MCP: the workspace's config files, plus the choices of `vox mcp enable|disable` (./mcp-settings.ts).
  const mcpChoices = cliMcpSettings(voxHome(), workspaceRoot);
  const host = {
    ...environmentHost({ model: opts.model ?? env.VOX_MODEL ?? DEFAULT_MODEL_REF, ...(permissions ? { permissions } : {}) }),
    mcpSettings: () => mcpChoices.get(), setMcpSettings: (p: Parameters<typeof mcpChoices.set>[0]) => mcpChoices.set(p),
  };
  // rg on PATH (Debian's ripgrep, Homebrew's…): .gitignore-aware search and listing; without it they walk everything.
  const ripgrepPath = findRipgrep({ env });
  const config: EngineConfig = {
    dbPath: voxDatabasePath(),
    workspaceRoot,
    demoModelPath: demoModelPath(packageRoot()),
    ...(env.VOX_LOCAL_THREADS ? { localThreads: Number(env.VOX_LOCAL_THREADS) } : {}),
    autoCheckpoints: opts.autoCheckpoints !== false,
    ...(ripgrepPath ? { ripgrepPath } : {}),
    // A short-lived CLI engine starts only prompts it queued itself: others' wait for VS Code or their own process.
    queuePolicy: opts.queuePolicy ?? 'own',
  };
  // Opened under the home lock, so a VS Code window moving its old database in is never seen half-done.
  return withHomeDatabase({ dbPath: config.dbPath }, () => {
    try {
      return createEngine(config, host);
    } catch (e) {
      if (!(opts.reading && isVoxError(e) && e.domain === 'store' && e.code === 'readOnly')) throw e;
      process.stderr.write(`[vox] ${config.dbPath} cannot be written; showing it read-only.\n`);
      return createEngine({ ...config, readOnly: true }, host);
    }
  }).value;
}

/** Runs `fn` with a connected client, then closes the client and disposes the engine. */
export async function withClient<T>(opts: ConnectOptions, fn: (c: Connected) => Promise<T>): Promise<T> {
  const c = connect(opts);
  try {
    return await fn(c);
  } finally {
    c.client.close();
    await c.engine.dispose();
  }
}
