/**
 * The per-platform VSIXs (scripts/package-vsix.mjs): packs each target, unpacks it and checks
 * what is inside: every native file's header (ELF / Mach-O / PE and the CPU type) is the
 * target's, that target's llama.cpp binaries and SQLite prebuild are there and no other
 * platform's, no addon is bound to one Node ABI (better-sqlite3 stays out), no test files, source
 * maps or TypeScript, few JavaScript files (vsce warns above 100), vsce printed no warning, and
 * dist/extension.js is under 2 MB. On this machine's own target it also loads the VSIX's SQLite
 * and node-llama-cpp (the bundled one) from the unpacked files and streams from the demo model.
 *
 * Targets: linux-x64, darwin-arm64 and win32-x64 (one per binary format), all six with
 * VOX_PACKAGE_ALL_TARGETS=1. The @node-llama-cpp/<platform> packages come from the npm registry
 * at package time and are cached in $VOX_PACKAGE_CACHE (default ~/.cache/vox/npm-packages), so a
 * second run downloads nothing. Each VSIX's size and file counts are printed at the end.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addonBinding, identifyNative } from '../support/native-binary';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { readZip, type ZipEntry } from '../support/zip';
import { CI_TARGETS, hostTarget, llamaPackageName, sqlitePrebuildDir, TARGETS } from '../../scripts/vsix/targets.mjs';
import { llamaGpuOption } from '../../src/engine/providers/local-llama';

const ROOT = path.resolve(__dirname, '..', '..');
const all = process.env.VOX_PACKAGE_ALL_TARGETS === '1';
const targets = all ? Object.keys(TARGETS) : CI_TARGETS;
const host = hostTarget();
/** vsce warns about performance above this many JavaScript files (vsce 3.9 package.ts). */
const VSCE_JS_WARNING = 100;
const MAX_EXTENSION_JS = 2 * 1024 * 1024;
const NATIVE_EXT = /\.(node|so|dylib|dll|exe)$|\.so\.\d/;

interface Packed {
  target: string;
  file: string;
  log: string;
  entries: ZipEntry[];
}

describe(`per-platform VSIX packages (${targets.join(', ')})`, function () {
  this.timeout(300_000);
  let tmp: string;
  const packed = new Map<string, Packed>();
  const sizes: string[] = [];

  before(function () {
    tmp = makeTmpDir('vox-vsix-');
    // One production build for every target (the bundles are the same).
    execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: ROOT, stdio: 'pipe' });
  });
  after(function () {
    if (sizes.length) process.stdout.write(`\n    VSIX sizes:\n${sizes.map((s) => `      ${s}`).join('\n')}\n`);
    removeTmpDir(tmp);
  });

  function pack(target: string): Packed {
    const have = packed.get(target);
    if (have) return have;
    const file = path.join(tmp, `vox-${target}.vsix`);
    const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--target', target, '--no-build', '--out', file], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, `package-vsix --target ${target} failed:\n${r.stderr}`);
    const p = { target, file, log: r.stderr, entries: readZip(file) };
    packed.set(target, p);
    const files = p.entries.filter((e) => e.name.startsWith('extension/'));
    const js = files.filter((e) => /\.(c|m)?js$/.test(e.name));
    sizes.push(`${target.padEnd(13)} ${(fs.statSync(file).size / 1024 / 1024).toFixed(1).padStart(5)} MiB, ${files.length} files, ${js.length} JavaScript`);
    return p;
  }

  for (const target of targets) {
    const t = TARGETS[target]!;
    describe(target, function () {
      it(`packs vox-<version>-${target}.vsix for target ${target} with no vsce warning`, function () {
        const p = pack(target);
        assert.doesNotMatch(p.log, /\bWARNING\b/, `vsce warned:\n${p.log}`);
        const manifest = p.entries.find((e) => e.name === 'extension.vsixmanifest');
        assert.ok(manifest, 'no extension.vsixmanifest');
        const xml = manifest.data.toString('utf8');
        assert.match(xml, new RegExp(`TargetPlatform="${target}"`));
        assert.match(xml, /<Icon>extension\/media\/icon\.png<\/Icon>/);
        // vsce rewrote the README's relative screenshots to absolute URLs from the repository.
        const readme = p.entries.find((e) => e.name === 'extension/readme.md')!.data.toString('utf8');
        const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
        assert.ok(images.length > 0 && images.every((i) => i.startsWith('https://')), `README images: ${images.join(', ')}`);
      });

      it(`every native file is ${t.format.toUpperCase()} for ${t.arch}, and none is bound to a Node ABI`, function () {
        const p = pack(target);
        const natives: string[] = [];
        for (const e of p.entries) {
          const n = identifyNative(e.data);
          if (!n) {
            assert.doesNotMatch(e.name, NATIVE_EXT, `${e.name} is named like a native file but its header is no ELF, Mach-O or PE`);
            continue;
          }
          natives.push(e.name);
          assert.equal(n.format, t.format, `${e.name} is ${n.format}, expected ${t.format}`);
          assert.deepEqual(n.cpus, [t.arch], `${e.name} is for ${n.cpus.join('+')}, expected ${t.arch}`);
          if (e.name.endsWith('.node')) assert.equal(addonBinding(e.data), 'napi', `${e.name} is not an N-API addon`);
        }
        assert.ok(natives.length >= 2, `only ${natives.length} native files`);
      });

      it(`holds ${llamaPackageName(target)} and the ${target} SQLite prebuild, and nothing for other platforms`, function () {
        const p = pack(target);
        const names = new Set(p.entries.map((e) => e.name));
        const llama = `extension/node_modules/${llamaPackageName(target)}`;
        for (const f of [
          `${llama}/package.json`,
          `${llama}/dist/index.js`,
          `${llama}/bins/${t.llama}/llama-addon.node`,
          `${llama}/bins/${t.llama}/_nlcBuildMetadata.json`,
          `extension/node_modules/@photostructure/sqlite/${sqlitePrebuildDir(target)}/@photostructure+sqlite.glibc.node`,
          'extension/node_modules/node-llama-cpp/dist/index.js',
          'extension/node_modules/node-llama-cpp/dist/testBindingBinary.js',
          'extension/node_modules/node-gyp-build/index.js',
          'extension/dist/extension.js',
          'extension/dist/webview.js',
          'extension/models/vox-demo.gguf',
          'extension/media/icon.png',
        ]) {
          assert.ok(names.has(f), `missing ${f}`);
        }
        // The webview's lazily loaded chunks: shiki's loader and its grammars (esbuild.mjs), without source maps.
        const chunks = [...names].filter((n) => n.startsWith('extension/dist/webview-chunks/'));
        assert.ok(chunks.some((n) => /\/shiki-loader-[\w-]+\.js$/.test(n)) && chunks.some((n) => /\/typescript-[\w-]+\.js$/.test(n)), `the webview chunks are missing (${chunks.length} found)`);
        assert.ok(!chunks.some((n) => n.endsWith('.map')), 'a source map in the VSIX');
        const version = JSON.parse(p.entries.find((e) => e.name === `${llama}/package.json`)!.data.toString('utf8')).version;
        const nlc = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')).version;
        assert.equal(version, nlc, `${llamaPackageName(target)} ${version} does not match node-llama-cpp ${nlc}`);
        const llamaPackages = new Set([...names].map((n) => /^extension\/node_modules\/@node-llama-cpp\/([^/]+)\//.exec(n)?.[1]).filter(Boolean));
        assert.deepEqual([...llamaPackages], [t.llama]);
        const prebuilds = new Set([...names].map((n) => /^extension\/node_modules\/@photostructure\/sqlite\/prebuilds\/([^/]+)\//.exec(n)?.[1]).filter(Boolean));
        assert.deepEqual([...prebuilds], [target]);
        const musl = [...names].filter((n) => n.endsWith('.musl.node'));
        assert.deepEqual(musl, [], 'musl builds belong to the alpine-* targets');
        const other = [...names].filter((n) => n.includes('/bins/') && !n.includes(`/bins/${t.llama}/`));
        assert.deepEqual(other, []);
        assert.ok(![...names].some((n) => n.startsWith('extension/node_modules/better-sqlite3/')), 'better-sqlite3 (Node ABI) is in a release VSIX');
      });

      it('ships no tests, sources, source maps or CLI, few JavaScript files, and a dist/extension.js under 2 MB', function () {
        const p = pack(target);
        const files = p.entries.map((e) => e.name).filter((n) => n.startsWith('extension/'));
        const bad = files.filter((n) => /(^|\/)(tests?|__tests__|src|webview|bench|scripts|docs)\//.test(n.replace(/^extension\//, '')) || /\.(test|spec)\.[cm]?[jt]s$|\.map$|\.d\.[cm]?ts$|\.ts$|\.gyp$|\.(c|cc|cpp|h)$|\.lib$/.test(n));
        assert.deepEqual(bad, []);
        assert.ok(!files.includes('extension/dist/cli.js'), 'the CLI bundle ships through npm, not the VSIX');
        const js = files.filter((n) => /\.(c|m)?js$/.test(n));
        assert.ok(js.length < VSCE_JS_WARNING, `${js.length} JavaScript files (vsce warns at ${VSCE_JS_WARNING})`);
        const ext = p.entries.find((e) => e.name === 'extension/dist/extension.js')!;
        assert.ok(ext.data.length < MAX_EXTENSION_JS, `dist/extension.js is ${ext.data.length} bytes`);
        assert.doesNotMatch(ext.data.toString('utf8').slice(-300), /sourceMappingURL/, 'dist/extension.js points at a source map');
        const pkg = JSON.parse(p.entries.find((e) => e.name === 'extension/package.json')!.data.toString('utf8'));
        assert.equal(pkg.devDependencies, undefined);
        assert.equal(pkg.scripts, undefined);
        assert.ok(pkg.icon && files.includes(`extension/${pkg.icon}`), `icon ${pkg.icon} not in the VSIX`);
      });
    });
  }

  it('has Marketplace metadata: a 128×128 PNG icon, repository, bugs, homepage, keywords, gallery banner, CHANGELOG, README images that exist', function () {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const png = fs.readFileSync(path.join(ROOT, pkg.icon));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', `${pkg.icon} is not a PNG`);
    // IHDR: width and height, big-endian, at 16 and 20.
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128], `${pkg.icon} is not 128×128`);
    assert.match(pkg.repository?.url ?? '', /^https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
    assert.match(pkg.bugs?.url ?? '', /^https:\/\//);
    assert.match(pkg.homepage ?? '', /^https:\/\//);
    assert.ok(Array.isArray(pkg.keywords) && pkg.keywords.length > 0 && pkg.keywords.length <= 30, 'keywords (vsce allows 30)');
    assert.match(pkg.galleryBanner?.color ?? '', /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(pkg.galleryBanner?.theme));
    assert.ok(fs.existsSync(path.join(ROOT, 'CHANGELOG.md')) && fs.existsSync(path.join(ROOT, 'LICENSE')));
    // Relative links that work on GitHub and that vsce turns into absolute ones from the repository URL.
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    assert.ok(images.length > 0, 'the README shows no screenshot');
    for (const img of images) {
      assert.match(img, /^(?!\/|\.|[a-z]+:)[\w./-]+\.png$/, `${img}: not a plain relative path`);
      assert.ok(fs.existsSync(path.join(ROOT, img)), `${img} does not exist`);
    }
  });

  it('`vsce ls` lists only the staged runtime files, with no warning', function () {
    const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--ls', '--no-build', '--no-model'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const out = `${r.stdout}${r.stderr}`;
    assert.doesNotMatch(out, /\bWARNING\b/);
    const top = new Set(r.stdout.split('\n').map((l) => /^[├└]─ ([^/\s]+)/.exec(l)?.[1]).filter(Boolean));
    assert.deepEqual([...top].sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'media', 'node_modules', 'package.json']);
  });

  (host && targets.includes(host) ? it : it.skip)(`the ${host ?? 'host'} VSIX's own SQLite and node-llama-cpp load here, and the demo model streams`, function () {
    const p = pack(host!);
    const dir = path.join(tmp, `unpacked-${host}`);
    for (const e of p.entries) {
      if (!e.name.startsWith('extension/')) continue;
      const f = path.join(dir, e.name);
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, e.data);
    }
    const ext = path.join(dir, 'extension');
    const script = `
      const { createRequire } = require('node:module');
      const path = require('node:path');
      const { pathToFileURL } = require('node:url');
      const ext = ${JSON.stringify(ext)};
      const req = createRequire(path.join(ext, 'dist', 'extension.js'));
      (async () => {
        const { DatabaseSync } = req('@photostructure/sqlite');
        const db = new DatabaseSync(path.join(ext, 'probe.db'));
        db.exec("PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram'); INSERT INTO t VALUES ('checkpoints in git');");
        const hit = db.prepare("SELECT x FROM t WHERE t MATCH 'point'").get();
        db.close();
        const resolved = req.resolve('@photostructure/sqlite');
        const m = await import(pathToFileURL(path.join(ext, 'node_modules', 'node-llama-cpp', 'dist', 'index.js')).href);
        const llama = await m.getLlama({ gpu: ${JSON.stringify(llamaGpuOption())}, build: 'never', logLevel: m.LlamaLogLevel.error });
        const model = await llama.loadModel({ modelPath: path.join(ext, 'models', 'vox-demo.gguf') });
        const ctx = await model.createContext({ contextSize: 256, threads: 1 });
        const seq = ctx.getSequence();
        const out = [];
        for await (const tok of seq.evaluate(model.tokenize('Hello'), { temperature: 0 })) { out.push(tok); if (out.length >= 8) break; }
        const text = model.detokenize(out);
        await ctx.dispose(); await model.dispose(); await llama.dispose();
        console.log(JSON.stringify({ hit, resolved, bindingPath: llama.buildType, text }));
      })().catch((e) => { console.error(e && e.stack || e); process.exit(1); });`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: tmp, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `loading from the unpacked VSIX failed:\n${r.stderr}`);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(res.hit, { x: 'checkpoints in git' });
    assert.ok(res.resolved.startsWith(ext), `@photostructure/sqlite resolved outside the VSIX: ${res.resolved}`);
    assert.equal(res.bindingPath, 'prebuilt');
    assert.ok(res.text.length > 0, 'the demo model produced no text');
  });
});
