/**
 * The workspace's files and folders as @-mentions see them: ripgrep's listing (so .gitignore,
 * .ignore and git's excludes apply; no .git or node_modules), or — without ripgrep — the tools'
 * own no-follow walk (which skips .git and node_modules but cannot read .gitignore). Kept for
 * `FILE_LIST_TTL_MS`, so typing after `@` does not list the workspace on every key.
 */
import { realpath } from 'node:fs/promises';
import { DirCursor } from '../tools/confined-fs';
import { ripgrepFiles, walkFiles } from '../tools/walk';

/** Most files listed for suggestions. */
export const MENTION_MAX_LISTED_FILES = 50_000;
/** How long a listing is reused. */
export const FILE_LIST_TTL_MS = 5_000;

export interface WorkspaceListing { files: string[]; folders: string[]; truncated: boolean; gitignoreAware: boolean }

export class WorkspaceFiles {
  private cached: { at: number; listing: Promise<WorkspaceListing> } | null = null;

  constructor(private readonly root: string, private readonly ripgrepPath: string | undefined, private readonly now: () => number = Date.now) {}

  list(): Promise<WorkspaceListing> {
    const t = this.now();
    if (this.cached && t - this.cached.at < FILE_LIST_TTL_MS) return this.cached.listing;
    const listing = this.read();
    this.cached = { at: t, listing };
    listing.catch(() => (this.cached = null));
    return listing;
  }

  private async read(): Promise<WorkspaceListing> {
    const realRoot = await realpath(this.root);
    const signal = new AbortController().signal;
    let files: string[];
    let truncated = false;
    let gitignoreAware = false;
    if (this.ripgrepPath) {
      const list = await ripgrepFiles(this.ripgrepPath, realRoot, '.', signal, MENTION_MAX_LISTED_FILES);
      files = list.files;
      truncated = list.truncated;
      gitignoreAware = true;
    } else {
      files = [];
      const cursor = await DirCursor.open(realRoot);
      try {
        for await (const comps of walkFiles(cursor, [], signal, { unreadable: 0, tooDeep: 0 })) {
          if (files.length >= MENTION_MAX_LISTED_FILES) {
            truncated = true;
            break;
          }
          files.push(comps.join('/'));
        }
      } finally {
        await cursor.close();
      }
    }
    const folders = new Set<string>();
    for (const f of files) {
      for (let i = f.lastIndexOf('/'); i > 0; i = f.lastIndexOf('/', i - 1)) {
        const d = f.slice(0, i);
        if (folders.has(d)) break;
        folders.add(d);
      }
    }
    return { files, folders: [...folders].sort(), truncated, gitignoreAware };
  }
}
