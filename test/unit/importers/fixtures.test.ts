/**
 * The importers against the transcripts the real tools wrote (test/fixtures/importers/, recorded
 * by scripts/record-import-fixtures.mjs with Claude Code 2.0.77 / 2.1.332 and Codex 0.63.0 /
 * 0.171.0 against local fake APIs). Counts are checked against an independent count of the raw
 * lines; every line type present is mapped or deliberately skipped (no `unknown*` reason).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../../src/engine/store/store';
import { ImportService, type SourceCounts } from '../../../src/engine/importers/service';
import { importedThreadId } from '../../../src/engine/importers/types';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { copyFixture, FIXTURES, jsonlFiles, readJsonlFile } from './support';

type Line = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Claude Code: prompts, tool calls and tool errors counted straight from the raw lines (sidechain warm-ups excluded). */
function countClaude(files: string[]) {
  let prompts = 0;
  let toolCalls = 0;
  let toolErrors = 0;
  let compactSummaries = 0;
  for (const f of files) {
    const lines = readJsonlFile(f) as Line[];
    const firstUser = lines.find((l) => l.type === 'user');
    if (path.basename(f).startsWith('agent-') && firstUser?.message?.content === 'Warmup') continue;
    for (const l of lines) {
      if (l.type === 'user' && l.isCompactSummary) compactSummaries++;
      else if (l.type === 'user' && !l.isMeta) {
        const c = l.message.content;
        if (typeof c === 'string' && !/^\s*<(command-|local-command|task-notification)/.test(c)) prompts++;
        if (Array.isArray(c)) for (const b of c) if (b.type === 'tool_result' && b.is_error === true) toolErrors++;
      } else if (l.type === 'assistant') {
        for (const b of l.message.content) if (b.type === 'tool_use') toolCalls++;
      }
    }
  }
  return { prompts, toolCalls, toolErrors, compactSummaries };
}

function countCodex(files: string[]) {
  let prompts = 0;
  let toolCalls = 0;
  let toolErrors = 0;
  for (const f of files) {
    for (const l of readJsonlFile(f) as Line[]) {
      const p = l.payload ?? {};
      if (l.type !== 'response_item') continue;
      if (p.type === 'message' && p.role === 'user') {
        const text = p.content.map((c: { text?: string }) => c.text ?? '').join('\n');
        if (!/^\s*(<environment_context>|<user_instructions>|<permissions|<skills_instructions>|# AGENTS\.md)/.test(text)) prompts++;
      }
      if (p.type === 'function_call' || p.type === 'custom_tool_call') toolCalls++;
      if ((p.type === 'function_call_output' || p.type === 'custom_tool_call_output') && /(Exit code:|Process exited with code) [1-9]/.test(String(p.output))) toolErrors++;
    }
  }
  return { prompts, toolCalls, toolErrors };
}

const unknownReasons = (c: SourceCounts) => Object.keys(c.skipped).filter((k) => /^unknown/.test(k));

describe('importers: the real tools’ transcripts', () => {
  let dir: string;
  let store: VoxStore;
  beforeEach(() => {
    dir = makeTmpDir('vox-import-');
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  for (const version of ['claude-code-2.0', 'claude-code-2.1']) {
    it(`${version}: every file imports; turns, tool calls, errors, sub-agents and the compact summary match the raw lines`, () => {
      const home = copyFixture(version, dir);
      const files = jsonlFiles(path.join(home, 'projects'));
      const expected = countClaude(files);
      const result = new ImportService(store).import({ claudeDir: home });
      const c = result.sources.find((s) => s.source === 'claude-code')!;
      assert.deepEqual(unknownReasons(c), [], `unmapped line types: ${JSON.stringify(c.skipped)}`);
      assert.equal(c.skipped.corruptLine ?? 0, 0);
      const threads = store.listThreads();
      const main = threads.filter((t) => t.parentThreadId === null);
      const children = threads.filter((t) => t.parentThreadId !== null);
      assert.equal(main.length, 1, 'one session (the 0-byte resume stubs are skipped)');
      assert.ok(children.length >= 1, 'the sub-agent is a child thread');
      // It records the run whose Task/Agent call started it.
      const parentRun = (store.db.prepare('SELECT parent_run_id AS r FROM threads WHERE id = ?').get(children[0]!.id) as { r: string | null }).r;
      assert.ok(parentRun !== null && store.items(parentRun).some((i) => i.toolName === 'Task' || i.toolName === 'Agent'), `parent run ${parentRun}`);
      assert.equal(c.toolCalls, expected.toolCalls);
      assert.equal(c.toolErrors, expected.toolErrors);
      assert.ok(expected.toolErrors >= 1 && expected.toolCalls >= 5, 'the fixture has a failing shell call and several tool calls');
      const all = threads.flatMap((t) => store.messages(t.id));
      assert.equal(all.filter((m) => m.role === 'user').length, expected.prompts);
      assert.equal(all.filter((m) => m.role === 'system').length, expected.compactSummaries);
      assert.ok(expected.compactSummaries === 1);
      // Runs: one per prompt, each ended, the model and usage kept.
      const runs = threads.flatMap((t) => store.runs(t.id));
      assert.equal(runs.length, expected.prompts);
      assert.ok(runs.every((r) => r.status === 'completed' && r.model.startsWith('claude-') && r.inputTokens > 0 && r.outputTokens > 0));
      // Several tool_use blocks in one message: the first turn's three calls are items of one run, each with its result.
      const first = store.items(runs.find((r) => r.threadId === main[0]!.id && r.ordinal === 0)!.id);
      const calls = first.filter((i) => i.kind === 'toolCall');
      assert.deepEqual(calls.slice(0, 3).map((i) => i.toolName), ['Read', 'Bash', 'Glob']);
      assert.ok(calls.every((i) => i.status !== 'started' && i.content.length > 0));
      assert.equal(calls.find((i) => i.toolName === 'Bash')!.isError, true);
      assert.ok(first.some((i) => i.kind === 'reasoning'));
      // The thread is marked with its source and opens as a Vox thread.
      const row = store.db.prepare('SELECT source, source_id, source_meta FROM threads WHERE id = ?').get(main[0]!.id) as { source: string; source_id: string; source_meta: string };
      assert.equal(row.source, 'claude-code');
      assert.equal(main[0]!.id, importedThreadId('claude-code', row.source_id));
      assert.equal(JSON.parse(row.source_meta).gitBranch, 'fixture-branch');
      assert.match(main[0]!.title, /^FIXTURE-START/);
    });
  }

  for (const version of ['codex-0.63', 'codex-0.171']) {
    it(`${version}: turns, shell calls with exit codes, the patch, reasoning and the resumed turn match the raw lines`, () => {
      const home = copyFixture(version, dir);
      const files = jsonlFiles(path.join(home, 'sessions'));
      const expected = countCodex(files);
      const c = new ImportService(store).import({ codexDir: home }).sources.find((s) => s.source === 'codex')!;
      assert.deepEqual(unknownReasons(c), [], `unmapped line types: ${JSON.stringify(c.skipped)}`);
      const threads = store.listThreads();
      assert.equal(threads.length, 1);
      const msgs = store.messages(threads[0]!.id);
      assert.equal(msgs.filter((m) => m.role === 'user').length, expected.prompts);
      assert.equal(expected.prompts, 2, 'the first prompt and the resumed one');
      assert.equal(c.toolCalls, expected.toolCalls);
      assert.equal(c.toolErrors, expected.toolErrors);
      assert.equal(expected.toolErrors, 1, 'ls of a missing directory exits 2');
      const runs = store.runs(threads[0]!.id);
      assert.equal(runs.length, 2);
      assert.ok(runs.every((r) => r.model === 'gpt-5-codex' && r.inputTokens > 0));
      const items = runs.flatMap((r) => store.items(r.id));
      assert.ok(items.some((i) => i.kind === 'reasoning'));
      assert.ok(items.some((i) => i.kind === 'toolCall' && /apply_patch|\*\*\* Begin Patch/.test(i.arguments ?? '')));
      assert.ok(msgs.some((m) => m.role === 'assistant' && /Resumed/.test(m.content)));
    });
  }

  it('importing every fixture twice changes nothing (event count unchanged)', () => {
    const dirs = {
      claudeDir: copyFixture('claude-code-2.1', dir),
      codexDir: copyFixture('codex-0.171', dir),
    };
    const svc = new ImportService(store);
    svc.import(dirs);
    const before = store.lastSeq();
    assert.ok(before > 0);
    const again = svc.import(dirs);
    assert.equal(store.lastSeq(), before);
    assert.ok(again.sources.every((s) => s.messages === 0 && s.unchangedFiles === s.files));
    // Even with the bookkeeping gone (a rewritten file), the derived ids keep the store as it is.
    store.db.exec('DELETE FROM import_files');
    svc.import(dirs);
    assert.equal(store.lastSeq(), before);
    assert.ok(svc.scan(dirs).sessions.every((s) => s.imported === 'yes'));
  });

  it('fixture folders exist for the four recorded versions', () => {
    for (const v of ['claude-code-2.0', 'claude-code-2.1', 'codex-0.63', 'codex-0.171']) assert.ok(fs.existsSync(path.join(FIXTURES, v)), v);
  });
});
