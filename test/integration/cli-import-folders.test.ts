/**
 * `vox session import-external` with several folders of one kind, as a real process: `--claude`
 * and `--codex` given more than once import every folder (a folder named twice once), `--json`
 * lists the counts per folder; a missing folder among them is a typed error naming it, checked
 * before anything is imported (the database stays empty).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { copyFixture } from '../unit/importers/support';

type Counts = { source: string; dir: string; sessions: number; threads: number };

describe('vox session import-external: repeated folder flags', function () {
  this.timeout(120_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let ws: string;
  const folders: Record<string, string> = {};
  before(() => {
    dir = makeTmpDir('vox-cli-import-folders-');
    env = { ...process.env, VOX_HOME: path.join(dir, 'vox'), HOME: path.join(dir, 'home') };
    for (const name of ['claude-code-2.0', 'claude-code-2.1', 'codex-0.63', 'codex-0.171']) folders[name] = copyFixture(name, dir);
    ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
  });
  after(() => removeTmpDir(dir));

  const threadCount = () => {
    const db = path.join(dir, 'vox', 'vox.db');
    if (!fs.existsSync(db)) return 0;
    const s = VoxStore.open(db);
    try {
      return s.listThreads().length;
    } finally {
      s.close();
    }
  };

  it('a missing folder among several is a typed error naming it, and nothing is imported', async () => {
    const missing = path.join(dir, 'no-such-claude');
    const r = await runVox(['session', 'import-external', '--claude', folders['claude-code-2.0']!, '--claude', missing, '--codex', folders['codex-0.63']!, '--json', '--cwd', ws], env);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /ImportError \(missingDir\): Claude Code config folder .*no-such-claude does not exist/);
    assert.equal(threadCount(), 0, 'validated before importing: no folder was imported');
  });

  it('every --claude and --codex folder is imported once, with counts per folder', async () => {
    const c20 = folders['claude-code-2.0']!;
    const c21 = folders['claude-code-2.1']!;
    const x63 = folders['codex-0.63']!;
    const x171 = folders['codex-0.171']!;
    const r = await runVox(['session', 'import-external', '--claude', c20, '--claude', c21, '--codex', x63, '--codex', x171, '--claude', `${c20}/`, '--json', '--cwd', ws], env);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { sources: Counts[] };
    assert.deepEqual(out.sources.map((s) => [s.source, s.dir]), [['claude-code', c20], ['claude-code', c21], ['codex', x63], ['codex', x171]]);
    for (const s of out.sources) assert.ok(s.sessions > 0 && s.threads > 0, `${s.dir} imported: ${JSON.stringify(s)}`);
    assert.equal(threadCount(), out.sources.reduce((n, s) => n + s.threads, 0));

    const scan = await runVox(['session', 'import-external', '--claude', c20, '--claude', c21, '--codex', x63, '--codex', x171, '--scan', '--json', '--cwd', ws], env);
    assert.equal(scan.code, 0, scan.err);
    const found = JSON.parse(scan.out) as { sessions: { source: string; imported: string }[]; sources: { dir: string }[] };
    assert.deepEqual(found.sources.map((s) => s.dir), [c20, c21, x63, x171]);
    assert.ok(found.sessions.length >= 4 && found.sessions.every((s) => s.imported === 'yes'), JSON.stringify(found.sessions));

    const human = await runVox(['session', 'import-external', '--claude', c20, '--claude', c21, '--cwd', ws], env);
    assert.equal(human.code, 0, human.err);
    assert.equal(human.out.trim().split('\n').length, 2, human.out);
    assert.match(human.out, new RegExp(`claude-code \\(${c21.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): \\d+ sessions`));
  });
});
