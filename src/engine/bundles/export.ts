/**
 * Exporting a bundle (./format.ts): the live threads (all, or the ones named and their subagent
 * threads), parents before children, each with its event log minus the unbundled types, its
 * counts and its checkpoint ref names; the workspace's rule files as written and the user's rules
 * as the host keeps them. Written next to the target and renamed over it, so a failed export
 * never leaves half a file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { VoxEvent } from '../../protocol/events';
import type { BundleExportView } from '../../protocol/commands/bundles';
import type { Host } from '../host';
import { WORKSPACE_RULES_DIR, readConfined } from '../rules/files';
import type { VoxStore } from '../store/store';
import { BundleError } from './errors';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, countEvents, isBundled, type Bundle, type BundleThread, type BundledEvent, type BundledRuleFile } from './format';

/** Events read per page while exporting one thread. */
const EXPORT_EVENT_PAGE = 5_000;

export interface ExportDeps { store: VoxStore; host: Host; workspaceRoot: string; now?: () => number }

interface LiveThread { id: string; title: string; createdAt: number; updatedAt: number; parentThreadId: string | null }

function liveThreads(store: VoxStore): LiveThread[] {
  return store.db.prepare('SELECT id, title, created_at AS createdAt, updated_at AS updatedAt, parent_thread_id AS parentThreadId FROM threads WHERE deleted = 0 ORDER BY created_at, id').all() as LiveThread[];
}

/** The threads to export: all, or the named ones plus every live descendant; parents first. */
function selectThreads(all: readonly LiveThread[], ids: readonly string[] | undefined): LiveThread[] {
  if (ids === undefined) return orderParentsFirst(all);
  const byId = new Map(all.map((t) => [t.id, t]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new BundleError('unknownThread', `No thread ${missing.map((m) => JSON.stringify(m)).join(', ')} in this install (deleted threads are not exported).`);
  const children = new Map<string, LiveThread[]>();
  for (const t of all) if (t.parentThreadId) children.set(t.parentThreadId, [...(children.get(t.parentThreadId) ?? []), t]);
  const picked = new Map<string, LiveThread>();
  const take = (t: LiveThread): void => {
    if (picked.has(t.id)) return;
    picked.set(t.id, t);
    for (const c of children.get(t.id) ?? []) take(c);
  };
  for (const id of ids) take(byId.get(id)!);
  return orderParentsFirst([...picked.values()]);
}

function orderParentsFirst(threads: readonly LiveThread[]): LiveThread[] {
  const ids = new Set(threads.map((t) => t.id));
  const out: LiveThread[] = [];
  const done = new Set<string>();
  const visit = (t: LiveThread, byId: Map<string, LiveThread>): void => {
    if (done.has(t.id)) return;
    done.add(t.id);
    const p = t.parentThreadId && ids.has(t.parentThreadId) ? byId.get(t.parentThreadId) : undefined;
    if (p) visit(p, byId);
    out.push(t);
  };
  const byId = new Map(threads.map((t) => [t.id, t]));
  for (const t of threads) visit(t, byId);
  return out;
}

function threadEvents(store: VoxStore, threadId: string): BundledEvent[] {
  const out: BundledEvent[] = [];
  for (let after = 0; ;) {
    const page = store.eventsAfter(after, { threadId, limit: EXPORT_EVENT_PAGE });
    for (const e of page) {
      if (!isBundled(e.type)) continue;
      const { seq: _seq, ...event } = e;
      out.push(event as BundledEvent);
    }
    if (page.length < EXPORT_EVENT_PAGE) return out;
    after = page[page.length - 1]!.seq;
  }
}

function checkpointRefs(store: VoxStore, threadId: string): string[] {
  return (store.db.prepare('SELECT ref FROM checkpoints WHERE thread_id = ? ORDER BY ordinal').all(threadId) as { ref: string }[]).map((r) => r.ref);
}

/** The workspace's `.vox/rules/*.md` files as written (front matter and all). */
export function workspaceRuleFiles(root: string): BundledRuleFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(root, WORKSPACE_RULES_DIR)).filter((n) => n.endsWith('.md')).sort();
  } catch {
    return [];
  }
  const out: BundledRuleFile[] = [];
  for (const file of names) {
    const text = readConfined(root, `${WORKSPACE_RULES_DIR}/${file}`);
    if (text !== null) out.push({ file, text });
  }
  return out;
}

/** The user's rules as the host keeps them (VS Code's `vox.rules`); entries without a name are left out. */
export function userRules(host: Host): Record<string, unknown>[] {
  const raw = host.rulesSettings?.()?.rules;
  return Array.isArray(raw) ? raw.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && typeof (r as { name?: unknown }).name === 'string') : [];
}

export function buildBundle(deps: ExportDeps, threadIds?: readonly string[]): Bundle {
  const threads: BundleThread[] = selectThreads(liveThreads(deps.store), threadIds).map((t) => {
    const events = threadEvents(deps.store, t.id);
    return { ...t, counts: countEvents(events as VoxEvent[]), events, checkpointRefs: checkpointRefs(deps.store, t.id) };
  });
  return {
    format: BUNDLE_FORMAT, version: BUNDLE_FORMAT_VERSION, exportedAt: (deps.now ?? Date.now)(), threads,
    rules: { workspace: workspaceRuleFiles(deps.workspaceRoot), user: userRules(deps.host) },
  };
}

/** Writes the bundle to `file` (atomically) and says what it holds. */
export function exportBundle(deps: ExportDeps, file: string, threadIds?: readonly string[]): BundleExportView {
  const bundle = buildBundle(deps, threadIds);
  const target = path.resolve(deps.workspaceRoot, file);
  const text = `${JSON.stringify(bundle)}\n`;
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { flag: 'wx' });
    fs.renameSync(tmp, target);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw new BundleError('io', `Could not write the bundle to ${target}: ${(e as NodeJS.ErrnoException).code ?? 'write failed'}.`);
  }
  const sum = (k: 'messages' | 'runs' | 'items') => bundle.threads.reduce((n, t) => n + t.counts[k], 0);
  return {
    path: target, version: bundle.version, threads: bundle.threads.length, messages: sum('messages'), runs: sum('runs'), items: sum('items'),
    events: bundle.threads.reduce((n, t) => n + t.events.length, 0), workspaceRules: bundle.rules.workspace.length, userRules: bundle.rules.user.length,
    checkpointRefs: bundle.threads.reduce((n, t) => n + t.checkpointRefs.length, 0), bytes: Buffer.byteLength(text),
  };
}
