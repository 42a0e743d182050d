/**
 * MCP Apps in the webview's logic (webview/src/lib/mcp-app.ts, features/mcp-apps.ts, the thread
 * state and blocks): the frame's document (CSP meta first, the chat's nonce on scripts and
 * styles, a doctype kept first), the bridge's reading of messages (JSON-RPC 2.0 only; unknown
 * requests vs ignored notifications; a state that is not a string), the bounded height, the host
 * context, and the app and its saved state on the tool call's view — from events (replay) and
 * from the live `toolResult` chunk.
 */
import { strict as assert } from 'node:assert';
import {
  APP_CSP, MCP_APP_MAX_HEIGHT_PX, MCP_APP_MIN_HEIGHT_PX, appDocument, boundedHeight, initializeResult, parseAppMessage, stateTooLarge,
} from '../../webview/src/lib/mcp-app';
import { applyChunks, applyEvents, createThreadState } from '../../webview/src/lib/thread-state';
import { runBlocks } from '../../webview/src/lib/blocks';
import { MCP_APP_STATE_MAX_BYTES } from '../../src/protocol/mcp-apps';

const META = `<meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`;

describe('webview: MCP App documents and bridge', () => {
  it('puts the CSP meta first (after a doctype) and the nonce on every script and style tag', () => {
    assert.equal(appDocument('<p>hi</p>', 'N'), `<!doctype html>${META}<p>hi</p>`);
    assert.equal(appDocument('  <!DOCTYPE html><html><head><script src="x"></script></head></html>', 'N'), `  <!DOCTYPE html>${META}<html><head><script nonce="N" src="x"></script></head></html>`);
    assert.equal(appDocument('<STYLE>a{}</STYLE><script>1</script><scripts>', 'N'), `<!doctype html>${META}<STYLE nonce="N">a{}</STYLE><script nonce="N">1</script><scripts>`);
    // An app's own (looser) CSP meta comes after Vox's: both policies hold.
    const own = appDocument('<meta http-equiv="Content-Security-Policy" content="default-src *">', 'N');
    assert.ok(own.indexOf(META) < own.indexOf('default-src *'));
    assert.equal(appDocument('<script>1</script>', 'a"b'), `<!doctype html>${META}<script nonce="a&quot;b">1</script>`);
  });

  it('reads JSON-RPC 2.0 messages and ignores everything else', () => {
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: {} }), { kind: 'initialize', id: 1 });
    assert.equal(parseAppMessage({ jsonrpc: '2.0', method: 'ui/initialize' }), null, 'initialize without an id');
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }), { kind: 'initialized' });
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height: 300 } }), { kind: 'sizeChanged', height: 300 });
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', id: 'a', method: 'vox/saveState', params: { state: 'x' } }), { kind: 'saveState', id: 'a', state: 'x' });
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', id: 2, method: 'vox/saveState', params: { state: 7 } }), { kind: 'badState', id: 2, message: 'params.state must be a string' });
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', id: 3, method: 'ui/update-model-context', params: { structuredContent: { a: 1 }, other: 1 } }), { kind: 'saveState', id: 3, state: '{"structuredContent":{"a":1}}' });
    assert.deepEqual(parseAppMessage({ jsonrpc: '2.0', id: 4, method: 'ui/open-link', params: {} }), { kind: 'unknownRequest', id: 4, method: 'ui/open-link' });
    for (const bad of [null, 'text', [], { method: 'ui/initialize', id: 1 }, { jsonrpc: '1.0', id: 1, method: 'ui/initialize' }, { jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', method: 'notifications/message' }, { jsonrpc: '2.0', id: {}, method: 'x' }]) {
      assert.equal(parseAppMessage(bad), null, JSON.stringify(bad));
    }
  });

  it('bounds the height and the state; the host context carries theme, colours and the saved state', () => {
    assert.equal(boundedHeight(99_999, 100), MCP_APP_MAX_HEIGHT_PX);
    assert.equal(boundedHeight(1, 100), MCP_APP_MIN_HEIGHT_PX);
    assert.equal(boundedHeight(250.4, 100), 250);
    assert.equal(boundedHeight('300', 100), 100);
    assert.equal(boundedHeight(Number.NaN, 120), 120);
    assert.equal(stateTooLarge('é'.repeat(MCP_APP_STATE_MAX_BYTES / 2)), null);
    assert.match(stateTooLarge('é'.repeat(MCP_APP_STATE_MAX_BYTES / 2) + 'x') ?? '', /16385 bytes/);
    const r = initializeResult({ theme: 'light', readVar: (v) => (v === '--vscode-editor-background' ? ' #fff ' : ''), toolName: 't', state: '{"a":1}' }) as { hostContext: Record<string, unknown> };
    assert.equal(r.hostContext.theme, 'light');
    assert.deepEqual(r.hostContext.styles, { variables: { '--color-background-primary': '#fff' } });
    assert.equal(r.hostContext['vox/state'], '{"a":1}');
  });
});

describe('webview: MCP Apps in the thread state', () => {
  const T = 'thread:a';
  const app = { uri: 'ui://w/x', html: '<p>x</p>', server: 'w', title: 'X' };
  let seq = 0;
  const e = (ev: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...ev });
  const base = () => [
    e({ type: 'thread.created', title: 'x' }),
    e({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'hi', runId: null, status: 'complete' }),
    e({ type: 'run.started', runId: 'run:a', ordinal: 0, provider: 'openai', model: 'openai:m', ownerPid: 1, userMessageId: 'm:u' }),
    e({ type: 'item.started', runId: 'run:a', itemId: 'i:1', ordinal: 0, kind: 'toolCall', toolName: 'mcp__w__x', arguments: '{}' }),
  ];

  it('replay: item.completed carries the app, mcpApp.stateSaved its state (the latest), onto the tool view', () => {
    const s = createThreadState(T);
    applyEvents(s, [
      ...base(),
      e({ type: 'item.completed', runId: 'run:a', itemId: 'i:1', status: 'completed', content: 'ok', isError: false, app }),
      e({ type: 'mcpApp.stateSaved', itemId: 'i:1', state: '{"n":1}' }),
      e({ type: 'mcpApp.stateSaved', itemId: 'i:1', state: '{"n":2}' }),
      e({ type: 'mcpApp.stateSaved', itemId: 'i:unknown', state: 'lost' }),
    ]);
    const tool = runBlocks(s.runs['run:a']!).find((b) => b.kind === 'tool');
    assert.ok(tool && tool.kind === 'tool');
    assert.deepEqual(tool.tool.app, app);
    assert.equal(tool.tool.appState, '{"n":2}');
  });

  it('live: the toolResult chunk brings the app before the event; an item without one has none', () => {
    const s = createThreadState(T);
    applyEvents(s, base());
    applyChunks(s, 'run:a', [
      { turnId: 'run:a', seq: 1, kind: 'toolCall', data: JSON.stringify({ itemId: 'i:1', callId: 'c1', name: 'mcp__w__x', arguments: '{}' }) },
      { turnId: 'run:a', seq: 2, kind: 'toolResult', data: JSON.stringify({ itemId: 'i:1', callId: 'c1', status: 'completed', content: 'ok', app }) },
      { turnId: 'run:a', seq: 3, kind: 'toolCall', data: JSON.stringify({ itemId: 'i:2', callId: 'c2', name: 'read_file', arguments: '{}' }) },
      { turnId: 'run:a', seq: 4, kind: 'toolResult', data: JSON.stringify({ itemId: 'i:2', callId: 'c2', status: 'completed', content: 'text' }) },
    ]);
    const tools = runBlocks(s.runs['run:a']!).filter((b) => b.kind === 'tool');
    assert.deepEqual(tools.map((b) => (b.kind === 'tool' ? b.tool.app?.uri ?? null : 'x')), ['ui://w/x', null]);
  });
});
