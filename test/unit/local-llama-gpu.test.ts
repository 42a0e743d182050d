/**
 * Which `gpu` option the local provider gives node-llama-cpp's getLlama on each platform a VSIX
 * ships for. node-llama-cpp 3.x finds its prebuilt binary by platform, arch and gpu type: it
 * imports the binaries package for that combination and looks in its `bins/<folder>/`, where the
 * folder is named by `getBuildFolderNameForBuildOptions` (platform-arch[-gpu]). The folder each
 * VSIX holds is scripts/vsix/targets.mjs's `llama` (test/packaging/vsix.test.ts checks that
 * `bins/<llama>/llama-addon.node` is in it), so node-llama-cpp's own functions, given our choice,
 * must name exactly that folder. With `gpu: false` on macOS arm64 they name `mac-arm64`, which no
 * package has (the only one is `mac-arm64-metal`): the darwin-arm64 VSIX would find no binary.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { llamaGpuOption } from '../../src/engine/providers/local-llama';
import { hostTarget, TARGETS } from '../../scripts/vsix/targets.mjs';

const NLC = path.resolve(__dirname, '..', '..', 'node_modules', 'node-llama-cpp');

type Gpu = 'metal' | 'cuda' | 'vulkan' | false;
interface NlcInternals {
  getGpuTypesToUseForOption(gpu: Gpu, o: { platform: string; arch: string }): Promise<(Gpu | 'auto')[]>;
  getBuildFolderNameForBuildOptions(o: {
    platform: string; arch: string; gpu: Gpu; llamaCpp: { repo: string; release: string }; customCmakeOptions: Map<string, string>;
  }): Promise<{ withoutCustomCmakeOptions: string }>;
  builtinLlamaCppGitHubRepo: string;
  builtinLlamaCppRelease: string;
}

/** node-llama-cpp's internal modules (not in its `exports`: loaded by file). */
async function nlcInternals(): Promise<NlcInternals> {
  const load = (rel: string) => import(pathToFileURL(path.join(NLC, 'dist', rel)).href);
  const [gpuTypes, folderName, config, release] = await Promise.all([
    load('bindings/utils/getGpuTypesToUseForOption.js'),
    load('bindings/utils/getBuildFolderNameForBuildOptions.js'),
    load('config.js'),
    load('bindings/utils/binariesGithubRelease.js'),
  ]);
  return {
    getGpuTypesToUseForOption: gpuTypes.getGpuTypesToUseForOption,
    getBuildFolderNameForBuildOptions: folderName.getBuildFolderNameForBuildOptions,
    builtinLlamaCppGitHubRepo: config.builtinLlamaCppGitHubRepo,
    builtinLlamaCppRelease: release.builtinLlamaCppRelease,
  };
}

/** node-llama-cpp's platform names (its getPlatform). */
const NLC_PLATFORM: Record<string, string> = { linux: 'linux', darwin: 'mac', win32: 'win' };

/** The binary folder node-llama-cpp looks for with `gpu` on a platform (what getLlama({ build: 'never' }) tries). */
async function folderFor(nlc: NlcInternals, os: string, arch: string, gpu: Gpu): Promise<string[]> {
  const platform = NLC_PLATFORM[os]!;
  const gpus = await nlc.getGpuTypesToUseForOption(gpu, { platform, arch });
  return Promise.all(
    gpus.map(async (g) => {
      assert.notEqual(g, 'auto', `gpu ${String(gpu)} on ${os}-${arch} resolves to 'auto' (detection), not a fixed binary`);
      const name = await nlc.getBuildFolderNameForBuildOptions({
        platform, arch, gpu: g as Gpu,
        llamaCpp: { repo: nlc.builtinLlamaCppGitHubRepo, release: nlc.builtinLlamaCppRelease },
        customCmakeOptions: new Map(),
      });
      return name.withoutCustomCmakeOptions;
    }),
  );
}

describe('local models: the gpu option for node-llama-cpp per platform', function () {
  it("is 'metal' on macOS arm64 and false (the CPU build) everywhere else", function () {
    assert.equal(llamaGpuOption('darwin', 'arm64'), 'metal');
    for (const [os, arch] of [['darwin', 'x64'], ['linux', 'x64'], ['linux', 'arm64'], ['win32', 'x64'], ['win32', 'arm64']] as const) {
      assert.equal(llamaGpuOption(os, arch), false, `${os}-${arch}`);
    }
  });

  it("defaults to this machine's platform and arch", function () {
    assert.equal(llamaGpuOption(), llamaGpuOption(process.platform, process.arch));
  });

  for (const [target, t] of Object.entries(TARGETS)) {
    it(`${target}: node-llama-cpp looks for exactly the binary folder its VSIX ships (bins/${t.llama})`, async function () {
      const nlc = await nlcInternals();
      assert.deepEqual(await folderFor(nlc, t.os, t.arch, llamaGpuOption(t.os, t.arch)), [t.llama]);
    });
  }

  it('gpu: false on macOS arm64 would look for a folder no package has (the bug this choice fixes)', async function () {
    const nlc = await nlcInternals();
    assert.deepEqual(await folderFor(nlc, 'darwin', 'arm64', false), ['mac-arm64']);
    assert.notEqual(TARGETS['darwin-arm64']!.llama, 'mac-arm64');
  });

  it("this machine's installed binaries package has that folder with a binary in it", function () {
    const host = hostTarget();
    if (!host) this.skip();
    const t = TARGETS[host!]!;
    const bins = path.join(path.dirname(NLC), '@node-llama-cpp', t.llama, 'bins', t.llama);
    if (!fs.existsSync(path.join(path.dirname(NLC), '@node-llama-cpp', t.llama))) this.skip(); // not installed here (npm ci --omit=optional elsewhere)
    assert.ok(fs.existsSync(path.join(bins, 'llama-addon.node')), `${bins}/llama-addon.node is missing`);
  });
});
