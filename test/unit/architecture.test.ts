/** Enforces the layering rules of docs/ARCHITECTURE.md on the source tree itself. */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (/\.(ts|mts|cts|js|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

const IMPORT_RE = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'"]+)['"]/g;

function importsOf(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  return [...src.matchAll(IMPORT_RE)].map((m) => m[1]!);
}

describe('architecture', () => {
  it('src/engine never imports vscode', () => {
    const offenders = filesUnder(path.join(ROOT, 'src/engine')).filter((f) => importsOf(f).some((i) => i === 'vscode' || i.startsWith('vscode/')));
    assert.deepEqual(offenders.map((f) => path.relative(ROOT, f)), []);
  });

  it('src/protocol imports nothing from the engine, the extension or vscode', () => {
    const offenders = filesUnder(path.join(ROOT, 'src/protocol')).filter((f) =>
      importsOf(f).some((i) => i === 'vscode' || i.includes('/extension') || (i.includes('/engine/') && !i.includes('/engine/ids/'))),
    );
    assert.deepEqual(offenders.map((f) => path.relative(ROOT, f)), []);
  });

  it('the import scanner catches each import form (so the tests above can fail)', () => {
    const tmp = path.join(ROOT, 'test', '.scan-probe.ts');
    fs.writeFileSync(tmp, `import * as a from 'vscode';\nconst b = require("vscode");\nconst c = import('vscode');\nimport 'vscode';\n`);
    try {
      assert.deepEqual(importsOf(tmp), ['vscode', 'vscode', 'vscode', 'vscode']);
    } finally {
      fs.rmSync(tmp);
    }
  });
});
