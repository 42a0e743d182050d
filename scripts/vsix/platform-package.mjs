// Fetches one exact version of an npm package (node-llama-cpp's per-platform binaries) from the
// npm registry into a cache folder, checks it against package-lock.json, and unpacks it.
//
// `npm pack <name>@<version>` downloads the registry's tarball without installing anything (no
// scripts, no os/cpu check: a macOS package is fetched on Linux). The tarball is kept as
// `<cache>/<name>-<version>.tgz`; a cached one is reused when its sha512 still matches the lock
// file's `integrity` for that package (npm records every optional platform package there), so a
// second run needs no network. The cache is $VOX_PACKAGE_CACHE or ~/.cache/vox/npm-packages.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export function packageCacheDir() {
  return process.env.VOX_PACKAGE_CACHE || path.join(os.homedir(), '.cache', 'vox', 'npm-packages');
}

/** The lock file's integrity for `node_modules/<name>` at `version`, or undefined. */
function lockedIntegrity(root, name, version) {
  const lockFile = path.join(root, 'package-lock.json');
  if (!fs.existsSync(lockFile)) return undefined;
  const entry = JSON.parse(fs.readFileSync(lockFile, 'utf8')).packages?.[`node_modules/${name}`];
  return entry?.version === version ? entry.integrity : undefined;
}

function sha512(file) {
  return `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

/**
 * Returns the path of `<name>@<version>`'s tarball in the cache, downloading it when missing.
 * Throws when the tarball does not match package-lock.json's integrity for it.
 */
export function fetchPackageTarball({ root, name, version, log = () => {} }) {
  const cache = packageCacheDir();
  fs.mkdirSync(cache, { recursive: true });
  const file = path.join(cache, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  const expected = lockedIntegrity(root, name, version);
  if (fs.existsSync(file)) {
    if (!expected || sha512(file) === expected) {
      log(`${name}@${version}: cached (${path.relative(process.cwd(), file) || file})`);
      return file;
    }
    log(`${name}@${version}: cached tarball does not match package-lock.json; fetching it again`);
    fs.rmSync(file);
  }
  const t0 = Date.now();
  // In a temporary folder: npm pack names the file itself (scope-name-version.tgz).
  const tmp = fs.mkdtempSync(path.join(cache, '.fetch-'));
  try {
    const r = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', tmp, '--json', '--loglevel=error'], {
      cwd: tmp,
      encoding: 'utf8',
      env: { ...process.env, npm_config_yes: 'true' },
      timeout: 300_000,
      shell: process.platform === 'win32',
    });
    if (r.status !== 0) throw new Error(`npm pack ${name}@${version} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim()}`);
    const [info] = JSON.parse(r.stdout);
    const got = path.join(tmp, info.filename);
    if (info.version !== version) throw new Error(`npm pack ${name}@${version} returned version ${info.version}`);
    if (expected && sha512(got) !== expected) throw new Error(`${name}@${version} from the registry does not match package-lock.json's integrity ${expected}`);
    fs.renameSync(got, file);
    log(`${name}@${version}: fetched ${(fs.statSync(file).size / 1e6).toFixed(1)} MB in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return file;
}

/**
 * Unpacks a package tarball (its `package/` folder) into `destDir`, keeping only the entries
 * `keep(relativePath)` accepts. Returns the number of files written.
 */
export function unpackPackage(tarball, destDir, keep = () => true) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-unpack-'));
  try {
    const r = spawnSync('tar', ['-xzf', tarball, '-C', tmp], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tar -xzf ${tarball} failed: ${r.stderr || r.error?.message}`);
    const src = path.join(tmp, 'package');
    let files = 0;
    fs.rmSync(destDir, { recursive: true, force: true });
    const walk = (rel) => {
      for (const e of fs.readdirSync(path.join(src, rel), { withFileTypes: true })) {
        const r2 = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(r2);
        else if (e.isFile() && keep(r2)) {
          fs.mkdirSync(path.dirname(path.join(destDir, r2)), { recursive: true });
          fs.copyFileSync(path.join(src, r2), path.join(destDir, r2));
          files++;
        }
      }
    };
    walk('');
    return files;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
