/**
 * watchWorkspaceFiles: tells a listener when one of a few workspace config files (`.vscode/mcp.json`,
 * `.mcp.json`, `.vox/permissions.json`, …) changed, whoever wrote it — the editor, a terminal, git,
 * another process. The engine owns it, so the CLI-served engine sees the same changes VS Code does.
 *
 * Each file is watched through its folder (node's fs.watch, not recursive): a folder watch sees a
 * write in place and an editor's or tool's replace-by-rename alike, and survives the file being
 * deleted and created again. A folder that does not exist yet is watched through its nearest
 * existing ancestor inside the workspace (the root at worst), so `mkdir .vscode && echo … >
 * .vscode/mcp.json` is seen: after every burst of events (debounced) the watches are placed again.
 * Events only wake it up; what counts is each file's stamp (size, mtime, inode, or absent) compared
 * with the last one, so noise from other files in a watched folder never reaches the listener, and
 * a change that raced the re-arming is still caught.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Quiet time after the last event before the stamps are compared (editors and `git checkout` write in bursts). */
export const FILE_WATCH_DEBOUNCE_MS = 100;
/** Most files one watcher follows (a handful of config files; each costs at most one folder watch). */
export const MAX_WATCHED_FILES = 16;

export interface FileWatch {
  /** Stops watching; the listener is not called again. */
  close(): void;
}

export interface FileWatchOptions {
  debounceMs?: number;
}

/** The stamp of one file: `-` when absent (or unreadable), else size, mtime and inode. */
function stampOf(abs: string): string {
  try {
    const st = fs.statSync(abs);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return '-';
  }
}

/** The folder to watch for `rel`: its own folder if it exists, else the nearest existing ancestor (never above the root). */
function watchFolderOf(root: string, rel: string): string {
  let dir = path.dirname(path.join(root, rel));
  while (dir.length > root.length) {
    try {
      if (fs.statSync(dir).isDirectory()) return dir;
    } catch {
      // absent: try its parent
    }
    dir = path.dirname(dir);
  }
  return root;
}

/**
 * Calls `onChange(changed)` (the relative paths whose stamp changed) after files among `relPaths`
 * (relative to `root`) were created, written, replaced or deleted. Never throws: a folder that cannot
 * be watched is tried again after the next event.
 */
export function watchWorkspaceFiles(root: string, relPaths: readonly string[], onChange: (changed: string[]) => void, opts: FileWatchOptions = {}): FileWatch {
  if (relPaths.length > MAX_WATCHED_FILES) throw new RangeError(`watchWorkspaceFiles: at most ${MAX_WATCHED_FILES} files (got ${relPaths.length})`);
  const debounceMs = opts.debounceMs ?? FILE_WATCH_DEBOUNCE_MS;
  const absRoot = path.resolve(root);
  const stamps = new Map(relPaths.map((rel) => [rel, stampOf(path.join(absRoot, rel))]));
  const watchers = new Map<string, fs.FSWatcher>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const wake = (): void => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(settle, debounceMs);
    timer.unref?.();
  };

  const arm = (): void => {
    const wanted = new Set(relPaths.map((rel) => watchFolderOf(absRoot, rel)));
    for (const [dir, w] of watchers) {
      if (!wanted.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    for (const dir of wanted) {
      if (watchers.has(dir)) continue;
      try {
        const w = fs.watch(dir, { persistent: false }, wake);
        // The folder went away (or the watch broke): forget it; the next settle places it again.
        w.on('error', () => {
          w.close();
          if (watchers.get(dir) === w) watchers.delete(dir);
          wake();
        });
        watchers.set(dir, w);
      } catch {
        // Vanished between the stat and the watch: its parent's watch (or the next event) re-arms.
      }
    }
  };

  function settle(): void {
    timer = null;
    if (closed) return;
    arm();
    const changed: string[] = [];
    for (const rel of relPaths) {
      const now = stampOf(path.join(absRoot, rel));
      if (now !== stamps.get(rel)) {
        stamps.set(rel, now);
        changed.push(rel);
      }
    }
    if (changed.length > 0) onChange(changed);
  }

  arm();
  return {
    close(): void {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
