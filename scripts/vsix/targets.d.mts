// Types of targets.mjs, for the TypeScript tests and benchmarks that read the same table.
export interface Target {
  os: 'linux' | 'darwin' | 'win32';
  arch: 'x64' | 'arm64';
  /** The @node-llama-cpp/<llama> package of that platform. */
  llama: string;
  /** What every native file in that VSIX must be. */
  format: 'elf' | 'macho' | 'pe';
}
export const TARGETS: Record<string, Target>;
export const CI_TARGETS: string[];
export function hostTarget(): string | undefined;
export function llamaPackageName(target: string): string;
export function sqlitePrebuildDir(target: string): string;
export function vsixName(name: string, version: string, target: string): string;
