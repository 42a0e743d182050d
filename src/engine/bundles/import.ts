/**
 * Importing a bundle (./format.ts) into this install, all or nothing: the file is read and
 * checked whole first; then, in one store transaction, each thread's events are appended with
 * their recorded times — every event this install does not already hold. Ids are kept, so an
 * event is the same event wherever it is: it is held when the thread here has an identical one
 * (type, payload, time), counted as a multiset (the second identical branch switch is a second
 * event). So importing twice changes nothing, and a thread that grew elsewhere gains exactly what
 * it lacks — within what ./guard.ts allows for a thread held here (no rights, nothing on a thread
 * made here, nothing hung on history the bundle does not carry). A thread the bundle adds gets a
 * `thread.imported` marker. A thread deleted here stays deleted (reported). A clash the
 * projections refuse (the same id for different data) rolls everything back as `bundle/conflict`.
 * Rules, all or nothing with the threads: a workspace rule file absent here is staged beside its
 * place before the transaction and renamed in as its last step (removed again if the transaction
 * fails); an identical one is left, a different one is kept as it is here (reported as a
 * conflict). User rules are added by name the same way, through the host, before the transaction,
 * and put back as they were if it fails (a host without user rules reports them).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BundleImportView } from '../../protocol/commands/bundles';
import { EVENT_VALIDATORS, type VoxEvent } from '../../protocol/events';
import { isVoxError } from '../../protocol/wire/vox-error';
import type { Host } from '../host';
import { WORKSPACE_RULES_DIR, readConfined, stageConfined, type StagedRuleFile } from '../rules/files';
import type { VoxStore } from '../store/store';
import { BundleError } from './errors';
import { IMPORTED_EVENT, checkHeldThread, checkNewThread } from './guard';
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

interface ThreadPlan { added: number; merged: number; unchanged: number; skipped: string[]; messages: number; runs: number; markers: number }

/** What to append: every bundle event the thread here does not hold (all of them for a new thread). */
function plan(store: VoxStore, bundle: Bundle): { events: { event: VoxEvent; time: number }[]; result: ThreadPlan } {
  const result: ThreadPlan = { added: 0, merged: 0, unchanged: 0, skipped: [], messages: 0, runs: 0, markers: 0 };
  const events: { event: VoxEvent; time: number }[] = [];
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
    const fresh: BundledEvent[] = [];
    for (const e of t.events) {
      const k = eventKey(e);
      const n = have.get(k) ?? 0;
      if (n > 0) {
        have.set(k, n - 1);
        continue;
      }
      fresh.push(e);
      if (e.type === 'message.added') result.messages++;
      else if (e.type === 'run.started') result.runs++;
    }
    if (row) checkHeldThread(store, t, fresh);
    else checkNewThread(store, t);
    for (const { time, ...event } of fresh) events.push({ event: event as VoxEvent, time });
    if (!row) {
      // Stamped with the thread's newest time, so the marker does not move it up the thread list.
      events.push({ event: { type: IMPORTED_EVENT, threadId: t.id }, time: t.events[t.events.length - 1]!.time });
      result.markers++;
      result.added++;
    } else if (fresh.length > 0) result.merged++;
    else result.unchanged++;
  }
  return { events, result };
}

/** Appends the threads' events; `last` runs inside the transaction after the plan (it puts the rule files in place). */
function importThreads(store: VoxStore, bundle: Bundle, last: () => void): { plan: ThreadPlan; events: number } {
  try {
    const { stored, result } = store.appendRecorded(() => {
      const p = plan(store, bundle);
      last();
      return p;
    });
    return { plan: result, events: stored.length - result.markers };
  } catch (e) {
    if (e instanceof BundleError) throw e;
    if (isVoxError(e) && e.domain === 'store' && (e.code === 'conflict' || e.code === 'notFound' || e.code === 'invalidEvent')) {
      throw new BundleError('conflict', `The bundle clashes with this install (${e.message}). Nothing was imported.`);
    }
    if (e instanceof Error && /constraint/i.test(e.message)) {
      throw new BundleError('conflict', 'The bundle clashes with this install (an id it uses holds other data here). Nothing was imported.');
    }
    throw e;
  }
}

/** Which workspace rule files to add (staged, not yet in place), which are identical, which differ here. */
function stageWorkspaceRules(root: string, bundle: Bundle): { view: BundleImportView['workspaceRules']; staged: StagedRuleFile[] } {
  const view = { added: 0, unchanged: 0, conflicts: [] as string[] };
  const staged: StagedRuleFile[] = [];
  const here = new Map(workspaceRuleFiles(root).map((r) => [r.file, r.text]));
  let rel = '';
  try {
    for (const r of bundle.rules.workspace) {
      rel = `${WORKSPACE_RULES_DIR}/${r.file}`;
      const existing = here.get(r.file) ?? readConfined(root, rel);
      if (existing === null || existing === undefined) {
        staged.push(stageConfined(root, rel, r.text));
        view.added++;
      } else if (existing === r.text) view.unchanged++;
      else view.conflicts.push(r.file.replace(/\.md$/, ''));
    }
  } catch (e) {
    for (const f of staged.reverse()) f.discard();
    throw new BundleError('io', `The bundle's rule file ${rel} cannot be written here (${isVoxError(e) ? e.message : 'write failed'}). Nothing was imported.`);
  }
  return { view, staged };
}

/** The user rules to add by name (identical ones left, differing ones kept as here and reported). */
function planUserRules(host: Host, bundle: Bundle): { view: BundleImportView['userRules']; toAdd: Record<string, unknown>[] } {
  const view = { added: 0, unchanged: 0, conflicts: [] as string[], unsupported: 0 };
  const byName = new Map(userRules(host).map((r) => [r.name as string, JSON.stringify(r)]));
  const toAdd: Record<string, unknown>[] = [];
  for (const r of bundle.rules.user) {
    const name = r.name as string;
    const here = byName.get(name);
    if (here === undefined) {
      toAdd.push(r);
      byName.set(name, JSON.stringify(r));
    } else if (here === JSON.stringify(r)) view.unchanged++;
    else view.conflicts.push(name);
  }
  if (toAdd.length > 0 && !host.setUserRules) view.unsupported = toAdd.length;
  else view.added = toAdd.length;
  return { view, toAdd };
}

export async function importBundle(deps: ImportDeps, file: string): Promise<BundleImportView> {
  const target = path.resolve(deps.workspaceRoot, file);
  const bundle = readBundleFile(target);
  // Refusals come first (a read-only plan), so a refused bundle touches no file and no setting.
  plan(deps.store, bundle);
  const workspace = stageWorkspaceRules(deps.workspaceRoot, bundle);
  const users = planUserRules(deps.host, bundle);
  const previous = deps.host.rulesSettings?.()?.rules;
  const setUsers = users.toAdd.length > 0 && deps.host.setUserRules ? deps.host.setUserRules.bind(deps.host) : undefined;
  try {
    await setUsers?.([...(Array.isArray(previous) ? previous : []), ...users.toAdd]);
  } catch {
    for (const f of workspace.staged) f.discard();
    throw new BundleError('io', 'The user rules of the bundle could not be saved. Nothing was imported.');
  }
  const placed: StagedRuleFile[] = [];
  let threads: { plan: ThreadPlan; events: number };
  try {
    threads = importThreads(deps.store, bundle, () => {
      for (const f of workspace.staged) {
        f.commit();
        placed.push(f);
      }
    });
  } catch (e) {
    for (const f of workspace.staged) if (!placed.includes(f)) f.discard();
    for (const f of [...placed].reverse()) removePlaced(deps.workspaceRoot, f);
    if (setUsers) await setUsers(Array.isArray(previous) ? previous : []).catch(() => undefined);
    if (isVoxError(e) && e.domain === 'rule') throw new BundleError('io', `A rule file of the bundle cannot be written here (${e.message}). Nothing was imported.`);
    throw e;
  }
  return {
    path: target, version: bundle.version,
    threadsAdded: threads.plan.added, threadsMerged: threads.plan.merged, threadsUnchanged: threads.plan.unchanged, threadsSkipped: threads.plan.skipped,
    events: threads.events, messages: threads.plan.messages, runs: threads.plan.runs,
    workspaceRules: workspace.view, userRules: users.view,
    checkpointRefs: bundle.threads.reduce((n, t) => n + t.checkpointRefs.length, 0),
  };
}

/** Takes back a rule file put in place by a transaction that then failed (it was absent before). */
function removePlaced(root: string, f: StagedRuleFile): void {
  fs.rmSync(path.join(root, f.rel), { force: true });
  f.discard();
}
