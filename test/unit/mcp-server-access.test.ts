/**
 * Vox's MCP server, the pure parts: the grant levels as protocol grants, McpToolAccess checks
 * (capabilityDenied, escalation naming the modes), the engine's thread-mode ceiling, and the DOM
 * snapshot rule (SPEC 5.2: over 20 KiB the inline DOM is dropped for a hint).
 */
import { strict as assert } from 'node:assert';
import { checkAccess, McpToolAccess } from '../../src/mcp-server/access';
import { applyDomSnapshotRule, DOM_SNAPSHOT_LIMIT_BYTES, dropDomSnapshots, isDomSnapshot } from '../../src/mcp-server/dom-snapshot';
import { McpServerError } from '../../src/mcp-server/errors';
import { mcpGrant, voxModes } from '../../src/mcp-server/grants';
import { checkWithinGrant, GrantModeError, NoApproverError, levelsOf, newThreadModes } from '../../src/engine/permissions/grant-modes';
import { ownerGrant } from '../../src/protocol/commands/grants';

function refusal(fn: () => unknown): McpServerError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof McpServerError, `expected McpServerError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a refusal');
}

describe('MCP server: grants and access', () => {
  it('maps each level to a protocol grant, never owner, confined to its workspace unless all workspaces are granted', () => {
    assert.deepEqual(mcpGrant('readOnly', 'x'), { capabilities: ['read'], holder: 'x', modes: { runtime: 0, interaction: 0 }, threads: 'workspace' });
    assert.deepEqual(mcpGrant('default', 'x'), { capabilities: ['read', 'write', 'startThreads'], holder: 'x', modes: { runtime: 1, interaction: 1 }, threads: 'workspace' });
    assert.deepEqual(mcpGrant('fullAccess', 'x'), { capabilities: ['read', 'write', 'startThreads'], holder: 'x', modes: { runtime: 2, interaction: 1 }, threads: 'workspace' });
    assert.deepEqual(mcpGrant('readOnly', 'x', { allWorkspaces: true }), { capabilities: ['read'], holder: 'x', modes: { runtime: 0, interaction: 0 } });
    assert.deepEqual(mcpGrant('default', 'x', { noApprover: true }), { capabilities: ['read', 'write', 'startThreads'], holder: 'x', modes: { runtime: 1, interaction: 1 }, threads: 'workspace', noApprover: true });
    assert.deepEqual(voxModes('readOnly', 'default'), { permissionMode: 'ask', workMode: 'plan' });
    assert.deepEqual(voxModes('default', 'plan'), { permissionMode: 'ask', workMode: 'plan' });
    assert.deepEqual(voxModes('default', 'default'), { permissionMode: 'ask', workMode: 'act' });
    assert.deepEqual(voxModes('fullAccess', 'default'), { permissionMode: 'fullAuto', workMode: 'act' });
  });

  it('reads pass for every level; writes are capabilityDenied for read-only callers', () => {
    assert.equal(checkAccess('t', McpToolAccess.reads, 'readOnly', {}), null);
    const e = refusal(() => checkAccess('send_to_thread', McpToolAccess.writes, 'readOnly', {}));
    assert.equal(e.code, 'capabilityDenied');
    assert.match(e.message, /send_to_thread needs the write capability/);
    assert.equal(checkAccess('t', McpToolAccess.writes, 'default', {}), null);
    // owner is never held by an MCP client, whatever the level.
    assert.equal(refusal(() => checkAccess('t', McpToolAccess.writesWithCapability('owner'), 'fullAccess', {})).code, 'capabilityDenied');
  });

  it('startsThreads refuses modes above the caller\'s, saying which mode and the caller\'s', () => {
    const access = McpToolAccess.startsThreads((a) => a.r as never, (a) => a.i as never);
    const up = refusal(() => checkAccess('start_thread', access, 'readOnly', { r: 'default', i: 'plan' }));
    assert.equal(up.code, 'escalation');
    assert.match(up.message, /runtime mode default, above this caller's readOnly/);
    const inter = refusal(() => checkAccess('start_thread', access, 'readOnly', { r: 'readOnly', i: 'default' }));
    assert.match(inter.message, /interaction mode default, above this caller's plan/);
    // At its own modes a read-only caller is still refused: it lacks startThreads.
    assert.equal(refusal(() => checkAccess('start_thread', access, 'readOnly', { r: 'readOnly', i: 'plan' })).code, 'capabilityDenied');
    assert.equal(refusal(() => checkAccess('start_thread', access, 'default', { r: 'fullAccess', i: 'default' })).code, 'escalation');
    assert.deepEqual(checkAccess('start_thread', access, 'default', { r: 'default', i: 'default' }), { runtime: 'default', interaction: 'default' });
    assert.deepEqual(checkAccess('start_thread', access, 'fullAccess', { r: 'fullAccess', i: 'default' }), { runtime: 'fullAccess', interaction: 'default' });
    assert.deepEqual(checkAccess('t', McpToolAccess.startsThreads('readOnly', 'plan'), 'default', {}), { runtime: 'readOnly', interaction: 'plan' });
    assert.equal(refusal(() => McpToolAccess.startsThreads('root' as never, 'plan')).code, 'rawRegistration');
  });

  it('the engine\'s ceiling: levels of Vox modes, a new thread\'s defaults, refusals above the grant', () => {
    assert.deepEqual(levelsOf({ permissionMode: 'fullAuto', workMode: 'plan' }), { runtime: 0, interaction: 0 });
    assert.deepEqual(levelsOf({ permissionMode: 'autoEdits', workMode: 'act' }), { runtime: 2, interaction: 1 });
    const ro = mcpGrant('readOnly', 'Claude');
    const def = mcpGrant('default', 'Claude');
    assert.deepEqual(newThreadModes(ro, undefined), { permissionMode: 'ask', workMode: 'plan' });
    assert.deepEqual(newThreadModes(def, undefined), { permissionMode: 'ask', workMode: 'act' });
    assert.equal(newThreadModes(ownerGrant('VS Code'), undefined), null);
    assert.deepEqual(newThreadModes(ownerGrant('VS Code'), { permissionMode: 'fullAuto' }), { permissionMode: 'fullAuto', workMode: 'act' });
    assert.throws(() => newThreadModes(def, { permissionMode: 'fullAuto', workMode: 'act' }), (e: unknown) => e instanceof GrantModeError && e.code === 'capabilityDenied' && /at most runtime default/.test(e.message));
    // A Plan thread keeps a permission mode for later: it may not exceed the ceiling either.
    assert.throws(() => checkWithinGrant(def, { permissionMode: 'autoEdits', workMode: 'plan' }, 'start a thread'), GrantModeError);
    assert.throws(() => checkWithinGrant(ro, { permissionMode: 'ask', workMode: 'act' }, 'x'), /runtime default, interaction default/);
    checkWithinGrant(mcpGrant('fullAccess', 'c'), { permissionMode: 'fullAuto', workMode: 'act' }, 'x');
    // No one answers approvals (stdio): a thread that would ask is refused; Plan and Full auto are not.
    const unattended = mcpGrant('fullAccess', 'c', { noApprover: true });
    for (const permissionMode of ['ask', 'autoEdits'] as const) {
      assert.throws(() => checkWithinGrant(unattended, { permissionMode, workMode: 'act' }, 'x'), (e: unknown) => e instanceof NoApproverError && e.domain === 'approval' && e.code === 'noApprover');
    }
    checkWithinGrant(unattended, { permissionMode: 'fullAuto', workMode: 'act' }, 'x');
    checkWithinGrant(unattended, { permissionMode: 'ask', workMode: 'plan' }, 'x');
  });
});

describe('MCP server: DOM snapshot rule', () => {
  const big = `<!DOCTYPE html><html><body>${'<div>x</div>'.repeat(2_000)}</body></html>`;
  const justUnder = `<html>${'a'.repeat(DOM_SNAPSHOT_LIMIT_BYTES - '<html>'.length)}`;

  it('recognises snapshots by their start or their key', () => {
    assert.equal(isDomSnapshot(null, '  \n<!doctype HTML><p>'), true);
    assert.equal(isDomSnapshot(null, '<HTML lang="en">'), true);
    assert.equal(isDomSnapshot(null, 'see <html> later'), false);
    assert.equal(isDomSnapshot('snapshot', '- button "OK" [ref=e3]'), true);
    assert.equal(isDomSnapshot('DOM', 'anything'), true);
    assert.equal(isDomSnapshot('content', 'anything'), false);
  });

  it('drops an oversized snapshot for a hint, keeps one at the limit and every other string', () => {
    assert.equal(Buffer.byteLength(justUnder), DOM_SNAPSHOT_LIMIT_BYTES);
    const longText = 'y'.repeat(50_000);
    const r = dropDomSnapshots({ a: big, b: [justUnder, longText], snapshot: 'é'.repeat(DOM_SNAPSHOT_LIMIT_BYTES / 2 + 1), n: 3 });
    assert.equal(r.dropped, 2);
    assert.match(r.value.a, /^\[DOM snapshot dropped: \d+ bytes is over the 20480-byte limit.*Narrow the selector/);
    assert.equal(r.value.b[0], justUnder);
    assert.equal(r.value.b[1], longText);
    assert.match(r.value.snapshot, /20482 bytes/); // UTF-8 bytes, not characters
    assert.equal(r.value.n, 3);
  });

  it('applies to a whole tool result: text parts, text/html resources and structured content', () => {
    const out = applyDomSnapshotRule({
      content: [{ type: 'text', text: big }, { type: 'text', text: 'plain' }, { type: 'resource', resource: { uri: 'page://1', mimeType: 'text/html', text: `<div>${'z'.repeat(30_000)}</div>` } }],
      structuredContent: { page: { dom: big } },
    });
    assert.match((out.content[0] as { text: string }).text, /DOM snapshot dropped/);
    assert.equal((out.content[1] as { text: string }).text, 'plain');
    assert.match((out.content[2] as { text: string }).text, /DOM snapshot dropped/);
    assert.match(JSON.stringify(out.structuredContent), /DOM snapshot dropped/);
    assert.ok(!JSON.stringify(out).includes('<div>x</div>'));
  });
});
