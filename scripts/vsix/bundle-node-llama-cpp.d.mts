// Types of bundle-node-llama-cpp.mjs for the TypeScript tests that import it.
export function bundleNodeLlamaCpp(pkgDir: string, outPkgDir: string): Promise<{ files: number; bytes: number }>;
