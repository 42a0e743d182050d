// Types of node-options.mjs for the TypeScript tests that import it.
import type { BuildOptions } from 'esbuild';
export const EXTERNAL: string[];
export function nodeBundleOptions(o: { production: boolean }): BuildOptions;
