/**
 * Every protocol command: a sample message per command decodes through the envelope to the same
 * value and encodes back to it (so a new command cannot be added without a sample here), its
 * declared capabilities exist, it belongs to exactly one area, and a session refuses it when the
 * grant lacks what it requires — before anything runs. Pure: no engine.
 */
import { strict as assert } from 'node:assert';
import { COMMAND_AREAS, COMMAND_TYPES, COMMANDS, commandEnvelope, requiredCapabilities, type ClientCommand, type CommandType } from '../../src/protocol/commands/index';
import { CAPABILITIES, missingCapabilities, ownerGrant, readOnlyGrant } from '../../src/protocol/commands/grants';
import { updateEnvelope } from '../../src/protocol/updates';
import { MAX_MODEL_REF_CHARS, MAX_TITLE_CHARS } from '../../src/protocol/commands/common';

/** One valid message of every command (params only; `type` and `requestId` are added). */
const SAMPLES: { [K in CommandType]: Omit<Extract<ClientCommand, { type: K }>, 'type' | 'requestId'> } = {
  listChildThreads: { threadId: 'thread:1' },
  listThreads: { limit: 20, before: '1700000000000:thread:x' },
  getThread: { threadId: 'thread:1' },
  resolveThreadId: { ref: 'abcd1234' },
  createThread: { threadId: 'cli', title: 'Checkpoints from the CLI' },
  subscribeThread: { threadId: 'thread:1', afterSeq: 0 },
  watchThreads: {},
  unsubscribe: { target: 'thread:thread:1' },
  renameThread: { threadId: 'thread:1', title: 'New title' },
  deleteThread: { threadId: 'thread:1' },
  sendPrompt: { threadId: 'thread:1', prompt: 'make the failing test pass', model: 'openai:gpt-4o-mini', parentMessageId: 'msg:1', ifBusy: 'queue', steer: true, mentions: [{ kind: 'file', target: 'src/a.ts' }, { kind: 'git' }] },
  cancelRun: { runId: 'run:thread:1:ordinal:0' },
  cancelAllRuns: {},
  listRuns: { threadId: 'thread:1' },
  listWaits: {},
  resumeRun: { runId: 'run:thread:1:ordinal:0' },
  snoozeRun: { runId: 'run:thread:1:ordinal:0', forMs: 300_000 },
  setAutoResume: { runId: 'run:thread:1:ordinal:0', autoResume: false },
  subscribeTurn: { turnId: 'run:thread:1:ordinal:0', afterSeq: 12, maxDelayMs: 0 },
  listQueue: { threadId: 'thread:1' },
  getQueued: { entryId: 'queued:1' },
  editQueued: { threadId: 'thread:1', entryId: 'queued:1', prompt: 'use the other parser' },
  moveQueued: { threadId: 'thread:1', entryId: 'queued:1', toIndex: 0 },
  cancelQueued: { threadId: 'thread:1', entryId: 'queued:1' },
  steerQueued: { threadId: 'thread:1', entryId: 'queued:1' },
  listApprovals: { threadId: 'thread:1' },
  respondToApproval: { callId: 'item:run:1:n:0', decision: 'denied' },
  getSettings: {},
  setModel: { model: 'anthropic:claude-sonnet-4-5' },
  listModels: { provider: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1' },
  testModel: { ref: 'openai:gpt-4o-mini' },
  checkCompatEndpoint: { baseUrl: 'http://127.0.0.1:8000/v1' },
  listCompatEndpoints: {},
  removeCompatEndpoint: { name: 'fake-local' },
  renameCompatEndpoint: { name: 'fake-local', newName: 'lab' },
  setUiPreference: { key: 'demoBannerDismissed', value: true },
  prepareModel: { model: 'local:demo' },
  captureCheckpoint: { threadId: 'thread:1' },
  listCheckpoints: { threadId: 'thread:1', includeEmpty: true },
  listCheckpointFiles: { threadId: 'thread:1', ordinal: 2 },
  diffCheckpoints: { from: 'refs/vox/checkpoints/thread%3A1/1', to: 'working' },
  readCheckpointFile: { ref: 'refs/vox/checkpoints/thread%3A1/1', path: 'src/a.ts', rawBase64: 'c3JjL2EudHM=' },
  restoreCheckpoint: { threadId: 'thread:1', ordinal: 1, mode: 'both' },
  undoRestore: { restorePoint: 'refs/vox/restore-points/1700000000000-0-abcd' },
  listRestorePoints: { all: true },
  previewRestore: { threadId: 'thread:1', ordinal: 2 },
  listOrphanedCheckpoints: {},
  pruneCheckpoints: { keepLast: 10, olderThanMs: 86_400_000 },
  createWorktree: { slug: 'feature-x', base: 'HEAD', branch: 'vox/feature-x' },
  listWorktrees: {},
  removeWorktree: { path: '.vox/worktrees/app/feature-x', force: true },
  startVariants: { prompt: 'try it three ways', models: ['openai:a', 'openai:b', 'local:demo'], parentThreadId: 'thread:1' },
  listVariants: {},
  watchVariants: {},
  diffVariant: { poolId: 'variants:1', index: 0 },
  adoptVariant: { poolId: 'variants:1', index: 1 },
  discardVariant: { poolId: 'variants:1', index: 1 },
  cancelVariants: { poolId: 'variants:1' },
  clearVariants: { poolId: 'variants:1' },
  previewToolCall: { callId: 'call_1' },
  listTurnChanges: { threadId: 'thread:1' },
  listFileHunks: { threadId: 'thread:1', runId: 'run:1', path: 'src/a.ts' },
  undoHunk: { threadId: 'thread:1', path: 'src/a.ts', hunkIndex: 0 },
  undoFile: { threadId: 'thread:1', path: 'src/a.ts' },
  keepFile: { threadId: 'thread:1' },
  estimateContext: { threadId: 'thread:1', draft: 'explain @src/a.ts', mentions: [{ kind: 'file', target: 'src/a.ts' }], model: 'openai:gpt-4o' },
  suggestMentions: { query: 'src/a', limit: 10 },
  getThreadTree: { threadId: 'thread:1' },
  switchBranch: { threadId: 'thread:1', toMessageId: 'msg:1' },
  regenerate: { threadId: 'thread:1', messageId: 'msg:2', model: 'openai:gpt-4o' },
  retry: { threadId: 'thread:1', runId: 'run:thread:1:ordinal:0' },
  editMessage: { threadId: 'thread:1', messageId: 'msg:2', content: 'a better answer' },
  compareBranches: { threadId: 'thread:1', leafIds: ['msg:2', 'msg:4'] },
  getPermissions: { threadId: 'thread:1' },
  setPermissionMode: { scope: 'thread', threadId: 'thread:1', mode: 'autoEdits' },
  removePermissionRule: { scope: 'workspace', index: 0, label: 'allow run_command command "npm test *"' },
  setWorkMode: { threadId: 'thread:1', mode: 'plan' },
  getPlan: { threadId: 'thread:1' },
  updatePlan: { threadId: 'thread:1', planId: 'plan:1', title: 'Fix the parser', steps: [{ id: 's1', text: 'Read the parser' }, { text: 'Add a test' }] },
  setPlanStep: { threadId: 'thread:1', planId: 'plan:1', stepId: 's1', status: 'done' },
  actOnPlan: { threadId: 'thread:1', planId: 'plan:1', prompt: 'Start with the test.' },
  listRules: {},
  getRule: { name: 'style' },
  createRule: { scope: 'workspace', name: 'style', attach: 'manual', body: 'Use tabs.', paths: ['src/**/*.ts'] },
  updateRule: { name: 'style', attach: 'always' },
  setRuleEnabled: { name: 'style', enabled: false },
  previewRules: { prompt: 'Fix it @style', mentionPaths: ['src/a.ts'] },
  getSystemPrompt: { threadId: null },
  listPromptHistory: { limit: 20 },
  exportBundle: { path: '/tmp/vox.bundle.json', threadIds: ['t1'] },
  importBundle: { path: '/tmp/vox.bundle.json' },
  compactThread: { threadId: 'thr:1', mode: 'upTo', messageId: 'msg:1' },
  listCompactions: { threadId: 'thr:1' },
  scanExternalSessions: { claudeDir: '/home/u/.claude' },
  importExternalSessions: { codexDir: '/home/u/.codex', ids: ['codex:01a232c2-075e-7fc1-8460-5edd210956d8'] },
  searchThreads: { query: 'parser bug', limit: 10 },
  previewHandoff: { threadId: 'thread:1', model: 'openai:gpt-4o', strategy: 'fullThreadSummary' },
  listMcpServers: {},
  reloadMcpConfig: {},
  watchMcpServers: {},
  restartMcpServer: { name: 'github' },
  setMcpServerEnabled: { name: 'github', enabled: false },
  setMcpToolEnabled: { name: 'github', tool: 'create_issue', enabled: false },
  authenticateMcpServer: { name: 'github' },
  readMcpResource: { server: 'docs', uri: 'file:///readme.md' },
  getMcpPrompt: { server: 'docs', name: 'summarise', arguments: { topic: 'x' } },
  setMcpAppState: { threadId: 't1', itemId: 'item:1', state: '{"n":1}' },
  forkThread: { threadId: 't1', messageId: 'msg:1' },
  getUsage: { since: '2026-12-01' },
  getThreadCosts: { threadId: 't1' },
  grantBalance: { kind: 'purchase', amountMicroUsd: 5_000_000 },
  setBudget: { scope: 'daily', capMicroUsd: 1_000_000, action: 'block' },
  setPrice: { model: 'gpt-test', input: 1, output: 2 },
  getPrice: { model: 'gpt-test' },
};

describe('protocol: every command', () => {
  for (const type of COMMAND_TYPES) {
    it(`${type} round-trips through the envelope (decode → encode → decode)`, () => {
      const message = { type, requestId: `r-${type}`, ...SAMPLES[type] };
      const d = commandEnvelope.decode(message);
      assert.equal(d.kind, 'known');
      assert.deepEqual(d.kind === 'known' && d.value, message);
      const again = commandEnvelope.decode(commandEnvelope.encode(d));
      assert.deepEqual(again, { ...d, kind: 'known' });
      // A message with an undeclared field still decodes (a newer client), without it.
      const extra = commandEnvelope.decode({ ...message, fromTheFuture: 1 });
      assert.deepEqual(extra.kind === 'known' && extra.value, message);
    });
  }

  it('the samples cover exactly the commands; each command is in exactly one area', () => {
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...COMMAND_TYPES].sort());
    const inAreas = Object.values(COMMAND_AREAS).flat();
    assert.deepEqual([...inAreas].sort(), [...COMMAND_TYPES].sort());
    assert.equal(new Set(inAreas).size, inAreas.length);
  });

  it('every command requires known capabilities; the owner holds them all, a read-only grant only `read` ones', () => {
    for (const type of COMMAND_TYPES) {
      const spec = COMMANDS[type];
      const needed = requiredCapabilities(spec as never, SAMPLES[type] as never);
      assert.ok(needed.length > 0, `${type} declares what it requires`);
      for (const c of needed) assert.ok((CAPABILITIES as readonly string[]).includes(c), `${type}: ${c}`);
      assert.deepEqual(missingCapabilities(ownerGrant('o'), needed), []);
      const readOnly = missingCapabilities(readOnlyGrant('g'), needed).length === 0;
      assert.equal(readOnly, needed.every((c) => c === 'read'), type);
    }
  });

  it('a prompt that starts a thread needs startThreads; one in an existing thread does not', () => {
    assert.deepEqual(requiredCapabilities(COMMANDS.sendPrompt as never, { threadId: null, prompt: 'x' } as never), ['write', 'startThreads']);
    assert.deepEqual(requiredCapabilities(COMMANDS.sendPrompt as never, { threadId: 't', prompt: 'x' } as never), ['write']);
  });

  it('decisions about the user\'s machine are the owner\'s: approvals, restores, adoption, settings, worktrees, prune', () => {
    for (const type of ['respondToApproval', 'restoreCheckpoint', 'undoRestore', 'adoptVariant', 'setModel', 'listModels', 'testModel', 'setUiPreference', 'createWorktree', 'removeWorktree', 'pruneCheckpoints'] as const) {
      assert.deepEqual(requiredCapabilities(COMMANDS[type] as never, SAMPLES[type] as never), ['owner'], type);
    }
  });

  it('a model ref is bounded by its own limit, not the title\'s: a local GGUF path longer than a title is accepted', () => {
    const longPath = `local:/home/me/models/${'nested/'.repeat(40)}model.gguf`;
    assert.ok(longPath.length > MAX_TITLE_CHARS && longPath.length <= MAX_MODEL_REF_CHARS);
    const tooLong = `local:/${'x'.repeat(MAX_MODEL_REF_CHARS)}`;
    const messages: Array<[string, (ref: string) => Record<string, unknown>]> = [
      ['setModel', (ref) => ({ model: ref })],
      ['testModel', (ref) => ({ ref })],
      ['prepareModel', (ref) => ({ model: ref })],
      ['sendPrompt', (ref) => ({ threadId: 't', prompt: 'x', model: ref })],
      ['startVariants', (ref) => ({ prompt: 'x', models: [ref] })],
    ];
    for (const [type, params] of messages) {
      assert.equal(commandEnvelope.tryDecode({ type, requestId: 'r', ...params(longPath) }).ok, true, `${type} takes a long local path`);
      assert.equal(commandEnvelope.tryDecode({ type, requestId: 'r', ...params(tooLong) }).ok, false, `${type} refuses a ref over MAX_MODEL_REF_CHARS`);
      assert.equal(commandEnvelope.tryDecode({ type, requestId: 'r', ...params('') }).ok, false, `${type} refuses an empty ref`);
    }
  });

  it('result and error updates decode; an error from a newer engine (unknown domain) still decodes', () => {
    assert.equal(updateEnvelope.decode({ type: 'result', inReplyTo: 'r1', value: { threadId: 't', runId: 'r' } }).kind, 'known');
    const e = updateEnvelope.decode({ type: 'error', inReplyTo: 'r1', domain: 'share', code: 'alreadyRedeemed', message: 'taken' });
    assert.equal(e.kind, 'known');
    assert.equal(updateEnvelope.tryDecode({ type: 'error', domain: 'run' }).ok, false, 'code and message are required');
  });
});
