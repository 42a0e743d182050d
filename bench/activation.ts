/**
 * Benchmark: how fast Vox activates, how long until the demo model's first streamed token, and
 * how big what ships is. Baseline, in the same run: the same bundle with the engine started
 * inside activation (`--eager`), which is what activation would cost without the lazy start.
 * Run: `node --import=tsx bench/activation.ts [--samples 7] [--no-build] [--pack]`. Not a test:
 * no asserts.
 *
 *   require             loading dist/extension.js (the production bundle) in a fresh process;
 *                       loadMs is the part after Node read the file (VoxApi.loadMs: evaluating it)
 *   activate()          Vox's own measure (VoxApi.activationMs: views, commands, status bar)
 *   activation          require + activate(), what VS Code waits for (the eager row adds engine start)
 *   first token         from the end of activation to the first streamed text of `local:demo`:
 *                       engine start (SQLite, migrations), node-llama-cpp import, model load, decode
 *   Send → first token  what the user waits for after pressing Send: cold (the model loads on the
 *                       first prompt: the baseline, and Vox before prepareModel) next to prepared
 *                       (the chat view sent `prepareModel` when it opened; the third probe kind)
 *   bundles             dist/*.js and .css sizes (production build)
 *   VSIXs               size, files, JavaScript files and native files of each vox-<v>-<t>.vsix in
 *                       the project root (`--pack`: packs linux-x64, darwin-arm64 and win32-x64 first)
 *
 * Each sample is a new Node process with a `vscode` stand-in (bench/activation/vscode-stub.ts);
 * one warm-up sample of each kind is dropped, then medians. A real VS Code adds its own
 * extension-host overhead; the e2e suite checks activation there (< 1 s) and the log prints it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CI_TARGETS } from '../scripts/vsix/targets.mjs';
import { identifyNative } from '../test/support/native-binary';
import { readZip } from '../test/support/zip';

const ROOT = path.resolve(__dirname, '..');
const argv = process.argv.slice(2);
const samples = Number(argv[argv.indexOf('--samples') + 1] || 0) || 7;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
const ms = (x: number) => `${x.toFixed(1)} ms`;
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

if (!argv.includes('--no-build')) execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: ROOT, stdio: 'pipe' });
if (!fs.existsSync(path.join(ROOT, 'models', 'vox-demo.gguf'))) execFileSync(process.execPath, ['scripts/make-demo-model.mjs'], { cwd: ROOT, stdio: 'pipe' });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-activation-'));
interface Sample {
  requireMs: number;
  activateMs: number;
  loadMs: number;
  activationMs: number;
  engineMs: number;
  firstTokenMs: number;
  prepareMs: number;
  sendToFirstMs: number;
  modulesAtActivation: number;
}
function probe(i: number, eager: boolean, prepare = false): Sample {
  const ws = path.join(tmp, `ws-${i}-${eager ? 'e' : 'l'}${prepare ? 'p' : ''}`);
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, 'README.md'), '# bench\n');
  execFileSync('git', ['init', '-q'], { cwd: ws });
  const r = spawnSync(process.execPath, ['--import=tsx', path.join(__dirname, 'activation', 'probe.ts'), ROOT, ws, path.join(ws, '.storage'), ...(eager ? ['--eager'] : []), ...(prepare ? ['--prepare'] : [])], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`probe failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Sample;
}

try {
  const lazy: Sample[] = [];
  const eager: Sample[] = [];
  const prepared: Sample[] = [];
  // Interleaved, so load from other processes hits both alike; sample 0 of each is the warm-up.
  for (let i = 0; i <= samples; i++) {
    const l = probe(i, false);
    const e = probe(i, true);
    const p = probe(i, false, true);
    if (i > 0) {
      lazy.push(l);
      eager.push(e);
      prepared.push(p);
    }
  }
  const col = (xs: Sample[], k: keyof Sample) => median(xs.map((s) => s[k]));
  console.log(`\nActivation (${samples} samples each, medians; Node ${process.version}, ${os.cpus().length} cores)\n`);
  console.log(`  ${''.padEnd(34)} ${'lazy engine (Vox)'.padStart(18)} ${'eager (baseline)'.padStart(18)}`);
  for (const [label, k] of [
    ['require dist/extension.js', 'requireMs'],
    ['  of which evaluating it (loadMs)', 'loadMs'],
    ['activate() (VoxApi.activationMs)', 'activateMs'],
    ['activation (require + activate)', 'activationMs'],
    ['engine start on first use', 'engineMs'],
    ['first streamed token after activation', 'firstTokenMs'],
  ] as const) {
    console.log(`  ${label.padEnd(34)} ${ms(col(lazy, k)).padStart(18)} ${ms(col(eager, k)).padStart(18)}`);
  }
  console.log(`  ${'modules loaded during activation'.padEnd(34)} ${String(col(lazy, 'modulesAtActivation')).padStart(18)} ${String(col(eager, 'modulesAtActivation')).padStart(18)}`);
  console.log(`  goal: activation < 100 ms: ${col(lazy, 'activationMs') < 100 ? 'met' : 'NOT met'}`);

  const cold = col(lazy, 'sendToFirstMs');
  const warm = col(prepared, 'sendToFirstMs');
  console.log('\nFirst token of local:demo from Send (what the user waits for)\n');
  console.log(`  ${'cold: the model loads on the first prompt (baseline)'.padEnd(58)} ${ms(cold).padStart(10)}`);
  console.log(`  ${'prepared: prepareModel when the chat view opened (Vox)'.padEnd(58)} ${ms(warm).padStart(10)}`);
  console.log(`  ${'  prepareModel itself (while the user types)'.padEnd(58)} ${ms(col(prepared, 'prepareMs')).padStart(10)}`);
  console.log(`  ratio prepared / cold: ${(warm / cold).toFixed(3)}×`);
  console.log(`  goal: first token < 500 ms after Send: ${warm < 500 ? 'met' : 'NOT met'}`);

  console.log('\nBundles (production build)\n');
  for (const f of fs.readdirSync(path.join(ROOT, 'dist')).filter((f) => /\.(js|css)$/.test(f)).sort()) {
    console.log(`  dist/${f.padEnd(16)} ${kib(fs.statSync(path.join(ROOT, 'dist', f)).size).padStart(12)}`);
  }
  const ext = fs.statSync(path.join(ROOT, 'dist', 'extension.js')).size;
  console.log(`  goal: dist/extension.js < 2 MB: ${ext < 2 * 1024 * 1024 ? 'met' : 'NOT met'}`);

  let vsixes = fs.readdirSync(ROOT).filter((f) => /^vox-.*-(linux|darwin|win32)-(x64|arm64)\.vsix$/.test(f)).map((f) => path.join(ROOT, f));
  if (argv.includes('--pack')) {
    vsixes = CI_TARGETS.map((t) => {
      const out = path.join(tmp, `vox-${t}.vsix`);
      execFileSync(process.execPath, ['scripts/package-vsix.mjs', '--no-build', '--target', t, '--out', out], { cwd: ROOT, stdio: 'pipe' });
      return out;
    });
  }
  console.log('\nVSIXs\n');
  if (!vsixes.length) console.log('  none in the project root (npm run package -- --target <t>, or --pack)');
  for (const f of vsixes) {
    const entries = readZip(f).filter((e) => e.name.startsWith('extension/'));
    const js = entries.filter((e) => /\.(c|m)?js$/.test(e.name)).length;
    const native = entries.filter((e) => identifyNative(e.data)).length;
    console.log(`  ${path.basename(f).padEnd(28)} ${mib(fs.statSync(f).size).padStart(9)}  ${String(entries.length).padStart(3)} files, ${String(js).padStart(2)} JavaScript, ${String(native).padStart(2)} native`);
  }
} finally {
  spawnSync('rm', ['-rf', tmp], { stdio: 'ignore' });
}
