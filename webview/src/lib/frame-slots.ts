/**
 * One heavy job per frame, across the webview: a job awaits `nextFrameSlot()` and runs in the task
 * right after a frame (requestAnimationFrame, then a timeout, so the frame is painted first), and
 * the next waiter gets the next frame. The long-thread open has several such jobs — the rows
 * around the viewport (VirtualList's overscan steps), a grammar's first evaluation, each code
 * block's tokenization — and each alone fits in a frame; together in one they held it past
 * 100 ms (Chromium runs queued tasks before a due frame until its starvation guard lets it in).
 * A hidden webview draws no frames: a slot then comes after FRAME_WAIT_MAX_MS; outside a page
 * (unit tests) right after a timeout.
 */

/** Longest wait for a frame before a slot is given anyway (a hidden webview). */
export const FRAME_WAIT_MAX_MS = 100;

const waiters: (() => void)[] = [];
let armed = false;

function arm(): void {
  if (armed || waiters.length === 0) return;
  armed = true;
  let fired = false;
  const go = (): void => {
    if (fired) return;
    fired = true;
    setTimeout(() => {
      armed = false;
      waiters.shift()?.();
      arm();
    }, 0);
  };
  const raf = (globalThis as { requestAnimationFrame?: (cb: () => void) => number }).requestAnimationFrame;
  if (typeof raf === 'function') raf.call(globalThis, go);
  setTimeout(go, typeof raf === 'function' ? FRAME_WAIT_MAX_MS : 0);
}

/** Resolves in the task after a frame, one waiter per frame, in the order they asked. */
export function nextFrameSlot(): Promise<void> {
  return new Promise((resolve) => {
    waiters.push(resolve);
    arm();
  });
}
