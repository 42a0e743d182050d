/**
 * `vox session import-external` as a real process: `--json` counts per source, `--scan`, the
 * standard locations from CLAUDE_CONFIG_DIR / CODEX_HOME / HOME, a typed error (exit 1) for a
 * folder that is missing, `--help`; and two processes importing the same folders at the same time
 * into one database — neither duplicates anything (the ids are derived; the store's transaction
 * decides), and the result equals one import.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { copyFixture } from '../unit/importers/support';

describe('vox session import-external', function () {
  this.timeout(120_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let claude: string;
  let codex: string;
  let ws: string;
  beforeEach(() => {
    dir = makeTmpDir('vox-cli-import-');
    env = { ...process.env, VOX_HOME: path.join(dir, 'vox') };
    claude = copyFixture('claude-code-2.1', dir);
    codex = copyFixture('codex-0.63', dir);
    ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
  });
  afterEach(() => removeTmpDir(dir));

  const eventCount = () => {
    const s = VoxStore.open(path.join(dir, 'vox', 'vox.db'));
    try {
      return { seq: s.lastSeq(), threads: s.listThreads().length, messages: (s.db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n };
    } finally {
      s.close();
    }
  };

  it('--json prints counts per source; --scan lists what was found; again imports nothing', async () => {
    const scan = await runVox(['session', 'import-external', '--claude', claude, '--codex', codex, '--scan', '--json', '--cwd', ws], env);
    assert.equal(scan.code, 0, scan.err);
    const found = JSON.parse(scan.out) as { sessions: { source: string; imported: string; title: string }[] };
    assert.deepEqual(found.sessions.map((s) => [s.source, s.imported]).sort(), [['claude-code', 'no'], ['codex', 'no']]);

    const r = await runVox(['session', 'import-external', '--claude', claude, '--codex', codex, '--json', '--cwd', ws], env);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { sources: { source: string; threads: number; messages: number; toolCalls: number; toolErrors: number; skipped: { reason: string; count: number }[] }[] };
    const bySource = Object.fromEntries(out.sources.map((s) => [s.source, s]));
    assert.equal(bySource['claude-code']!.threads, 2, 'the session and its sub-agent');
    assert.equal(bySource.codex!.threads, 1);
    assert.ok(bySource.codex!.toolErrors === 1 && bySource.codex!.toolCalls === 4);
    assert.ok(bySource['claude-code']!.skipped.some((s) => s.reason === 'attachment' && s.count > 0));
    const human = await runVox(['session', 'import-external', '--claude', claude, '--codex', codex, '--cwd', ws], env);
    assert.equal(human.code, 0);
    assert.match(human.out, /claude-code \(\S+claude-code-2.1\): 1 sessions \(2 files, 2 unchanged\), 0 threads, 0 messages/);
    const rescan = JSON.parse((await runVox(['session', 'import-external', '--claude', claude, '--codex', codex, '--scan', '--json', '--cwd', ws], env)).out) as typeof found;
    assert.ok(rescan.sessions.every((s) => s.imported === 'yes'));
  });

  it('defaults to CLAUDE_CONFIG_DIR and CODEX_HOME; a missing folder is a typed error (exit 1); --help', async () => {
    const r = await runVox(['session', 'import-external', '--json', '--cwd', ws], { ...env, CLAUDE_CONFIG_DIR: claude, CODEX_HOME: codex, HOME: path.join(dir, 'empty-home') });
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { sources: { source: string; threads: number }[] };
    assert.deepEqual(out.sources.map((s) => [s.source, s.threads]), [['claude-code', 2], ['codex', 1]], 'no ~/.cursor: that source is absent, not an error');
    const bad = await runVox(['session', 'import-external', '--codex', path.join(dir, 'nope'), '--cwd', ws], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /ImportError \(missingDir\): Codex home folder .*nope does not exist/);
    const help = await runVox(['session', 'import-external', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.out, /--claude <dir>[\s\S]*--codex <dir>[\s\S]*--cursor <dir>[\s\S]*--json/);
  });

  it('two processes importing the same folders at once duplicate nothing', async () => {
    const args = ['session', 'import-external', '--claude', claude, '--codex', codex, '--json', '--cwd', ws];
    const [a, b] = await Promise.all([runVox(args, env), runVox(args, env)]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const together = eventCount();
    // The same import into a fresh database, alone: the same threads, messages and events.
    const alone = { ...env, VOX_HOME: path.join(dir, 'alone') };
    assert.equal((await runVox(args, alone)).code, 0);
    const s = VoxStore.open(path.join(dir, 'alone', 'vox.db'));
    const expected = { seq: s.lastSeq(), threads: s.listThreads().length, messages: (s.db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n };
    s.close();
    assert.deepEqual(together, expected);
    const counts = [a, b].map((r) => (JSON.parse(r.out) as { sources: { threads: number }[] }).sources.reduce((n, x) => n + x.threads, 0));
    assert.equal(counts[0]! + counts[1]!, 3, 'each thread was created by exactly one of the two');
  });
});
