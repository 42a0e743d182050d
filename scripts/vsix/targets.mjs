// The platforms Vox ships a VSIX for, and what each one holds. One table, read by
// scripts/package-vsix.mjs (what to stage) and test/packaging/vsix.test.ts (what to expect).
//
// A VS Code target `<os>-<arch>` (vsce package --target) gets:
//  - `@node-llama-cpp/<llama>`: node-llama-cpp's prebuilt llama.cpp binaries for that platform,
//    the package node-llama-cpp 3.x imports for the `gpu` option the local provider passes there
//    (`llamaGpuOption` in src/engine/providers/local-llama.ts: `'metal'` on macOS arm64, whose only
//    prebuilt package is the Metal build, `false` elsewhere); `llama` is also the binary's folder
//    in it (`bins/<llama>/`), test/unit/local-llama-gpu.test.ts checks both agree;
//  - `@photostructure/sqlite`'s `prebuilds/<os>-<arch>/…glibc.node` (N-API: loads in Node and in
//    Electron alike; on Linux the glibc build, musl systems being the separate `alpine-*` targets).
// `format` and `cpu` are what every native file in that VSIX must be: ELF / Mach-O / PE, and the
// CPU type in its header.

/** @typedef {{ os: 'linux' | 'darwin' | 'win32', arch: 'x64' | 'arm64', llama: string, format: 'elf' | 'macho' | 'pe' }} Target */

/** @type {Record<string, Target>} */
export const TARGETS = {
  'linux-x64': { os: 'linux', arch: 'x64', llama: 'linux-x64', format: 'elf' },
  'linux-arm64': { os: 'linux', arch: 'arm64', llama: 'linux-arm64', format: 'elf' },
  'darwin-x64': { os: 'darwin', arch: 'x64', llama: 'mac-x64', format: 'macho' },
  'darwin-arm64': { os: 'darwin', arch: 'arm64', llama: 'mac-arm64-metal', format: 'macho' },
  'win32-x64': { os: 'win32', arch: 'x64', llama: 'win-x64', format: 'pe' },
  'win32-arm64': { os: 'win32', arch: 'arm64', llama: 'win-arm64', format: 'pe' },
};

/** The targets the packaging test builds in CI (one per binary format; all six with VOX_PACKAGE_ALL_TARGETS=1). */
export const CI_TARGETS = ['linux-x64', 'darwin-arm64', 'win32-x64'];

/** This machine's target, or undefined when Vox ships none for it. */
export function hostTarget() {
  const t = `${process.platform}-${process.arch}`;
  return t in TARGETS ? t : undefined;
}

/** The npm name of a target's node-llama-cpp binaries package. */
export function llamaPackageName(target) {
  return `@node-llama-cpp/${TARGETS[target].llama}`;
}

/** The folder of @photostructure/sqlite's prebuilt binary for a target (inside its package). */
export function sqlitePrebuildDir(target) {
  return `prebuilds/${target}`;
}

/** The VSIX's file name for a version and target (`vsce package --target` names it the same way). */
export function vsixName(name, version, target) {
  return `${name}-${version}-${target}.vsix`;
}
