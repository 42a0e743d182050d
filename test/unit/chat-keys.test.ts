/**
 * The chat's own shortcuts (webview/src/lib/chat-keys.ts): the keys of package.json's
 * keybindings, on Linux/Windows and on a Mac; other combinations pass through.
 */
import { strict as assert } from 'node:assert';
import { chatKeyAction, type KeyLike } from '../../webview/src/lib/chat-keys';

const key = (k: Partial<KeyLike> & { key: string }): KeyLike => ({ code: '', altKey: false, shiftKey: false, ctrlKey: false, metaKey: false, ...k });

describe('chat keys', () => {
  it('Alt+Enter approves, Alt+Shift+Enter denies, Ctrl+Alt+N is a new thread, Ctrl+Alt+V focuses the composer (Linux, Windows)', () => {
    assert.equal(chatKeyAction(key({ key: 'Enter', altKey: true }), false), 'approve');
    assert.equal(chatKeyAction(key({ key: 'Enter', altKey: true, shiftKey: true }), false), 'deny');
    assert.equal(chatKeyAction(key({ key: 'n', code: 'KeyN', altKey: true, ctrlKey: true }), false), 'newThread');
    assert.equal(chatKeyAction(key({ key: 'v', code: 'KeyV', altKey: true, ctrlKey: true }), false), 'focusComposer');
    // A layout where Alt+N types a character still has the physical key.
    assert.equal(chatKeyAction(key({ key: 'ñ', code: 'KeyN', altKey: true, ctrlKey: true }), false), 'newThread');
  });

  it('on a Mac the same with ⌘', () => {
    assert.equal(chatKeyAction(key({ key: 'Enter', altKey: true, metaKey: true }), true), 'approve');
    assert.equal(chatKeyAction(key({ key: 'Enter', altKey: true, metaKey: true, shiftKey: true }), true), 'deny');
    assert.equal(chatKeyAction(key({ key: 'n', code: 'KeyN', altKey: true, metaKey: true }), true), 'newThread');
    assert.equal(chatKeyAction(key({ key: 'v', code: 'KeyV', altKey: true, metaKey: true }), true), 'focusComposer');
    assert.equal(chatKeyAction(key({ key: 'Enter', altKey: true }), true), null, 'a Mac needs ⌘');
  });

  it('everything else passes through', () => {
    for (const [k, mac] of [
      [key({ key: 'Enter' }), false],
      [key({ key: 'Enter', shiftKey: true }), false],
      [key({ key: 'Enter', ctrlKey: true }), false], // Ctrl+Enter steers (the composer's)
      [key({ key: 'Enter', ctrlKey: true, altKey: true }), false],
      [key({ key: 'n', code: 'KeyN', ctrlKey: true }), false],
      [key({ key: 'v', code: 'KeyV', ctrlKey: true }), false], // paste
      [key({ key: 'n', code: 'KeyN', altKey: true }), false],
      [key({ key: 'N', code: 'KeyN', altKey: true, ctrlKey: true, shiftKey: true }), false],
      [key({ key: 'Enter', altKey: true, isComposing: true }), false],
    ] as const) assert.equal(chatKeyAction(k, mac), null, JSON.stringify(k));
  });
});
