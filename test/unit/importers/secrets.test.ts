/**
 * Imported sessions keep no credentials: a prompt, a tool call's arguments and a tool result in a
 * real Claude Code transcript that carry key-shaped text are stored redacted, as Vox's own tool
 * output is (src/engine/platform/secrets.ts), and the database file holds none of them.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../../src/engine/store/store';
import { ImportService } from '../../../src/engine/importers/service';
import { REDACTED } from '../../../src/engine/platform/secrets';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { copyFixture, jsonlFiles } from './support';

const KEY = 'sk-ant-api03-' + 'Q'.repeat(40);
// A token of one repeated letter is a placeholder to the rule set (gitleaks' global allowlist), so the token mixes characters.
const BEARER_TOKEN = 'zQ4x'.repeat(6);
const BEARER = 'Bearer ' + BEARER_TOKEN;

type Block = { type?: string; content?: unknown; input?: Record<string, unknown>; text?: string };

describe('importers: secrets', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir('vox-import-secrets-')));
  afterEach(() => removeTmpDir(dir));

  it('key-shaped text in prompts, tool arguments and tool results is stored redacted; the file holds none of it', () => {
    const home = copyFixture('claude-code-2.1', dir);
    const file = jsonlFiles(path.join(home, 'projects')).find((f) => !path.basename(f).startsWith('agent-') && fs.statSync(f).size > 0)!;
    const planted = { prompt: false, args: false, result: false };
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => {
      const o = JSON.parse(l) as { type?: string; message?: { content?: unknown } };
      const c = o.message?.content;
      if (o.type === 'user' && typeof c === 'string' && !planted.prompt) {
        o.message!.content = `${c} my key is ${KEY}`;
        planted.prompt = true;
      }
      if (Array.isArray(c)) {
        for (const b of c as Block[]) {
          if (b.type === 'tool_use' && b.input && !planted.args) {
            b.input.note = `header ${BEARER}`;
            planted.args = true;
          }
          if (b.type === 'tool_result' && !planted.result) {
            b.content = typeof b.content === 'string' ? `${b.content}\nANTHROPIC_API_KEY=${KEY}` : [{ type: 'text', text: `ANTHROPIC_API_KEY=${KEY}` }];
            planted.result = true;
          }
        }
      }
      return JSON.stringify(o);
    });
    assert.deepEqual(planted, { prompt: true, args: true, result: true }, 'the fixture has a prompt, a tool call and a result to plant in');
    fs.writeFileSync(file, lines.join('\n') + '\n');

    const dbPath = path.join(dir, 'vox.db');
    const store = VoxStore.open(dbPath);
    new ImportService(store).import({ claudeDir: home });
    const thread = store.listThreads().find((t) => t.parentThreadId === null)!;
    const texts = store.messages(thread.id).map((m) => m.content).join('\n');
    assert.ok(texts.includes(REDACTED), 'the prompt is kept, its key redacted');
    assert.ok(!texts.includes(KEY));
    store.close();
    for (const f of [dbPath, `${dbPath}-wal`]) {
      if (!fs.existsSync(f)) continue;
      const bytes = fs.readFileSync(f).toString('latin1');
      assert.ok(!bytes.includes('Q'.repeat(40)), `${path.basename(f)} holds the key`);
      assert.ok(!bytes.includes(BEARER_TOKEN), `${path.basename(f)} holds the bearer token`);
    }
  });
});
