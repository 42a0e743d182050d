/**
 * Lets a unit test load src/extension modules outside VS Code to read what they declare (their
 * contributions' command ids): `requireWithoutVscode` resolves the `vscode` import to an empty,
 * frozen module while it loads one, so any use of the VS Code API at load time fails (the modules
 * use it only once activated).
 */
import Module from 'node:module';
import * as path from 'node:path';

const EMPTY = path.join(__dirname, 'vscode-empty.cjs');

type Resolve = (request: string, ...rest: unknown[]) => string;

export function requireWithoutVscode<T>(modulePath: string): T {
  const loader = Module as unknown as { _resolveFilename: Resolve };
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    return request === 'vscode' ? EMPTY : resolve.call(this, request, ...rest);
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded under the resolver above, not at import time
    return require(modulePath) as T;
  } finally {
    loader._resolveFilename = resolve;
  }
}
