/**
 * Where Vox keeps its per-user files — the one database every client shares (VS Code windows,
 * the `vox` CLI, `vox mcp serve`) and the CLI's MCP choices: `$VOX_HOME`, else `~/.vox`. The
 * extension and the CLI both ask this module, so they can never disagree about the folder.
 */
import * as os from 'node:os';
import * as path from 'node:path';

/** The environment variable that moves Vox's home folder. */
export const VOX_HOME_ENV = 'VOX_HOME';
/** The database's file name inside the home folder. */
export const DATABASE_FILE = 'vox.db';

/** `$VOX_HOME` (resolved; an empty or blank value counts as unset), else `~/.vox`. */
export function voxHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env[VOX_HOME_ENV]?.trim();
  return home ? path.resolve(home) : path.join(os.homedir(), '.vox');
}

/** The shared database: `<voxHome>/vox.db`. */
export function voxDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(voxHome(env), DATABASE_FILE);
}
