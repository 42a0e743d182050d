/** The `vox` CLI as a real process (from source, through tsx), for tests: its exit code and output. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const CLI_ENTRY = path.join(REPO_ROOT, 'src/cli/main.ts');

export interface CliResult { code: number | null; out: string; err: string }

/** Runs `vox …args` with `env` and resolves when it exits (asynchronously: servers in this process keep answering). */
export function runVox(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}
