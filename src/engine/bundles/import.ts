/**
 * Importing a bundle (./format.ts) into this install, all or nothing: the file is read and
 * checked whole first; then, in one store transaction, each thread's events are appended with
 * their recorded times — every event this install does not already hold. Ids are kept, so an
 * event is the same event wherever it is: it is held when the thread here has an identical one
 * (type, payload, time), counted as a multiset (the second identical branch switch is a second
 * event). So importing twice changes nothing, and a thread that grew elsewhere gains exactly what
 * it lacks. A thread deleted here stays deleted (reported). A clash the projections refuse (the
 * same id for different data) rolls everything back as `bundle/conflict`.
 * Rules come after the threads committed: a workspace rule file absent here is written, an
 * identical one is left, a different one is kept as it is here (reported as a conflict); user
 * rules are added by name the same way, through the host (a host without user rules reports them).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BundleImportView } from '../../protocol/commands/bundles';
import { EVENT_VALIDATORS } from '../../protocol/events';
import { isVoxError } from '../../protocol/wire/vox-error';
import type { Host } from '../host';
import { WORKSPACE_RULES_DIR, readConfined, writeConfined } from '../rules/files';
import type { VoxStore } from '../store/store';
import { BundleError } from './errors';
import { MAX_BUNDLE_BYTES, parseBundle, type Bundle, type BundledEvent } from './format';
import { userRules, workspaceRuleFiles } from './export';

export interface ImportDeps { store: VoxStore; host: Host; workspaceRoot: string }

/**
 * The identity of an event: its type, payload and recorded time, with keys in a stable order. A
 * thread's workspace is where this copy of it lives (the importing store stamps its own), not its
 * history: left out.
 */
function eventKey(given: BundledEvent | { type: string; time: number }): string {
  const e = given.type === 'thread.created' ? { ...given, workspace: undefined } : given;
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
    return v;
  };
  return JSON.stringify(sorted(e));
}

/** A stored event as the bundle's parser sees it (the same validator drops the same absent or unknown fields). */
function canonical(type: string, payload: object): { type: string } {
  const v = (EVENT_VALIDATORS as Record<string, ((x: unknown) => unknown) | undefined>)[type];
  try {
    if (v) return v({ ...payload, type }) as { type: string };
  } catch {
    // an event of an older shape: compared as stored
  }
  return { ...payload, type };
}

export function readBundleFile(file: string): Bundle {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    throw new BundleError('io', `Cannot read the bundle ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((e as NodeJS.ErrnoException).code ?? 'read failed')}.`);
  }
  if (!st.isFile()) throw new BundleError('io', `${file} is not a file.`);
  if (st.size > MAX_BUNDLE_BYTES) throw new BundleError('tooLarge', `The bundle is ${st.size} bytes; the largest Vox imports is ${MAX_BUNDLE_BYTES} bytes. Nothing was imported.`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new BundleError('io', `Cannot read the bundle ${file}: ${(e as NodeJS.ErrnoException).code ?? 'read failed'}.`);
  }
  return parseBundle(text);
}

interface ThreadPlan { added: number; merged: number; unchanged: number; skipped: string[]; messages: number; runs: number }

/** What to append: every bundle event the thread here does not hold (all of them for a new thread). */
function plan(store: VoxStore, bundle: Bundle): { events: { event: BundledEvent; time: number }[]; result: ThreadPlan } {
  const result: ThreadPlan = { added: 0, merged: 0, unchanged: 0, skipped: [], messages: 0, runs: 0 };
  const events: { event: BundledEvent; time: number }[] = [];
  const state = store.db.prepare('SELECT deleted FROM threads WHERE id = ?');
  const held = store.db.prepare('SELECT type, payload, time FROM events WHERE thread_id = ? ORDER BY seq');
  for (const t of bundle.threads) {
    const row = state.get(t.id) as { deleted: number } | undefined;
    if (row?.deleted) {
      result.skipped.push(t.id);
      continue;
    }
    const have = new Map<string, number>();
    if (row) {
      for (const r of held.all(t.id) as { type: string; payload: string; time: number }[]) {
        const k = eventKey({ ...canonical(r.type, JSON.parse(r.payload) as object), time: r.time });
        have.set(k, (have.get(k) ?? 0) + 1);
      }
    }
    let fresh = 0;
    for (const e of t.events) {
      const k = eventKey(e);
      const n = have.get(k) ?? 0;
      if (n > 0) {
        have.set(k, n - 1);
        continue;
      }
      const { time, ...event } = e;
      events.push({ event: event as BundledEvent, time });
      fresh++;
      if (e.type === 'message.added') result.messages++;
      else if (e.type === 'run.started') result.runs++;
    }
    if (!row) result.added++;
    else if (fresh > 0) result.merged++;
    else result.unchanged++;
  }
  return { events, result };
}

function importThreads(store: VoxStore, bundle: Bundle): { plan: ThreadPlan; events: number } {
  try {
    const { stored, result } = store.appendRecorded(() => plan(store, bundle));
    return { plan: result, events: stored.length };
  } catch (e) {
    if (isVoxError(e) && e.domain === 'store' && (e.code === 'conflict' || e.code === 'notFound' || e.code === 'invalidEvent')) {
      throw new BundleError('conflict', `The bundle clashes with this install (${e.message}). Nothing was imported.`);
    }
    if (e instanceof Error && /constraint/i.test(e.message)) {
      throw new BundleError('conflict', 'The bundle clashes with this install (an id it uses holds other data here). Nothing was imported.');
    }
    throw e;
  }
}

function importWorkspaceRules(root: string, bundle: Bundle): BundleImportView['workspaceRules'] {
  const out = { added: 0, unchanged: 0, conflicts: [] as string[] };
  const here = new Map(workspaceRuleFiles(root).map((r) => [r.file, r.text]));
  for (const r of bundle.rules.workspace) {
    const rel = `${WORKSPACE_RULES_DIR}/${r.file}`;
    const existing = here.get(r.file) ?? readConfined(root, rel);
    if (existing === null || existing === undefined) {
      writeConfined(root, rel, r.text);
      out.added++;
    } else if (existing === r.text) out.unchanged++;
    else out.conflicts.push(r.file.replace(/\.md$/, ''));
  }
  return out;
}

async function importUserRules(host: Host, bundle: Bundle): Promise<BundleImportView['userRules']> {
  const out = { added: 0, unchanged: 0, conflicts: [] as string[], unsupported: 0 };
  const current = userRules(host);
  const byName = new Map(current.map((r) => [r.name as string, JSON.stringify(r)]));
  const toAdd: Record<string, unknown>[] = [];
  for (const r of bundle.rules.user) {
    const name = r.name as string;
    const here = byName.get(name);
    if (here === undefined) {
      toAdd.push(r);
      byName.set(name, JSON.stringify(r));
    } else if (here === JSON.stringify(r)) out.unchanged++;
    else out.conflicts.push(name);
  }
  if (toAdd.length === 0) return out;
  if (!host.setUserRules) return { ...out, unsupported: toAdd.length };
  const raw = host.rulesSettings?.()?.rules;
  await host.setUserRules([...(Array.isArray(raw) ? raw : []), ...toAdd]);
  return { ...out, added: toAdd.length };
}

export async function importBundle(deps: ImportDeps, file: string): Promise<BundleImportView> {
  const target = path.resolve(deps.workspaceRoot, file);
  const bundle = readBundleFile(target);
  const threads = importThreads(deps.store, bundle);
  const workspaceRules = importWorkspaceRules(deps.workspaceRoot, bundle);
  const users = await importUserRules(deps.host, bundle);
  return {
    path: target, version: bundle.version,
    threadsAdded: threads.plan.added, threadsMerged: threads.plan.merged, threadsUnchanged: threads.plan.unchanged, threadsSkipped: threads.plan.skipped,
    events: threads.events, messages: threads.plan.messages, runs: threads.plan.runs,
    workspaceRules, userRules: users,
    checkpointRefs: bundle.threads.reduce((n, t) => n + t.checkpointRefs.length, 0),
  };
}
