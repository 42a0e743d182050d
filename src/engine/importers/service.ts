/**
 * ImportService: scans the three tools' folders (what was found, and whether it is imported) and
 * imports chosen sessions into the Vox store. Each file is one IMMEDIATE transaction that reads
 * its bookkeeping row (`import_files`, migration 12), parses only what is new since then (a grown
 * JSONL from its last offset with the parser's saved state; a Cursor store from its last message),
 * applies the events (./apply.ts drops what the store already holds) and writes the row back —
 * so a re-import is a no-op and two processes importing at once never duplicate anything.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { VoxStore } from '../store/store';
import { applier, type AppendAt } from './apply';
import { newBuilderState, ThreadBuilder, type BuilderState } from './builder';
import { claudeLine } from './claude-code';
import { codexLine, type CodexLineContext } from './codex';
import { cursorMessages, readCursorStore, workspacePath } from './cursor';
import { checkSourceDir, claudeChildThreadId, discoverClaude, discoverCodex, discoverCursor, type Discovery, type FoundSession, type SessionFile } from './discover';
import { readJsonl } from './jsonl';
import {
  addTally, DEFAULT_IMPORT_LIMITS, emptyTally, ImportError, importedItemId, IMPORT_SOURCES,
  type ImportLimits, type ImportSource, type ImportTally,
} from './types';

/** The folders to look at: one per kind (`claudeDir`, …) and/or any number of each (`folders`). */
export interface ImportDirs { claudeDir?: string; codexDir?: string; cursorDir?: string; folders?: readonly { source: ImportSource; dir: string }[] }

/** The standard locations, as each tool's own variables name them (CLAUDE_CONFIG_DIR, CODEX_HOME). */
export function defaultImportDirs(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): Required<Omit<ImportDirs, 'folders'>> {
  return {
    claudeDir: env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'),
    codexDir: env.CODEX_HOME || path.join(home, '.codex'),
    cursorDir: path.join(home, '.cursor'),
  };
}

export type ImportedState = 'no' | 'partial' | 'yes';
export interface ScannedSession {
  id: string; source: ImportSource; project: string | null; date: number; title: string; size: number; files: number; imported: ImportedState;
}
export interface SourceScan { source: ImportSource; dir: string; error: { code: string; message: string } | null; skipped: Record<string, number> }
export interface ScanResult { sessions: ScannedSession[]; sources: SourceScan[] }

export interface SourceCounts extends ImportTally { source: ImportSource; dir: string; sessions: number; files: number; unchangedFiles: number }
export interface ImportResult { sources: SourceCounts[] }

interface FileState {
  builder: BuilderState;
  warmup?: boolean;
  codex?: Omit<CodexLineContext, 'fallbackTime'>;
  cursor?: { root: string; count: number };
}

interface FileRow { size: number; mtime_ms: number; offset: number; lines: number; state: string | null }

const DIR_KEYS: Record<ImportSource, 'claudeDir' | 'codexDir' | 'cursorDir'> = { 'claude-code': 'claudeDir', codex: 'codexDir', cursor: 'cursorDir' };
/** How a missing folder of each kind is named in its error (the same words as the discoverers'). */
const SOURCE_DIR_LABEL: Record<ImportSource, string> = { 'claude-code': 'Claude Code config', codex: 'Codex home', cursor: 'Cursor' };

export class ImportService {
  constructor(
    private readonly store: VoxStore,
    private readonly limits: ImportLimits = DEFAULT_IMPORT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The sources to look at: the folders given (each kind's own flag first, then `folders`, in
   * order; the same folder twice once), or (none given) every standard location. The folders given
   * are all checked before anything is read: a missing one is a typed error naming it, and nothing
   * is imported; a standard one that is absent is reported, not thrown.
   */
  private sources(dirs: ImportDirs): { source: ImportSource; dir: string; explicit: boolean }[] {
    const given: { source: ImportSource; dir: string; explicit: boolean }[] = [];
    const seen = new Set<string>();
    const add = (source: ImportSource, dir: string) => {
      const abs = path.resolve(dir);
      if (seen.has(`${source}\0${abs}`)) return;
      seen.add(`${source}\0${abs}`);
      given.push({ source, dir: abs, explicit: true });
    };
    for (const s of IMPORT_SOURCES) if (dirs[DIR_KEYS[s]] !== undefined) add(s, dirs[DIR_KEYS[s]] as string);
    for (const f of dirs.folders ?? []) add(f.source, f.dir);
    if (given.length === 0) {
      const defaults = defaultImportDirs();
      return IMPORT_SOURCES.map((s) => ({ source: s, dir: defaults[DIR_KEYS[s]], explicit: false }));
    }
    given.sort((a, b) => IMPORT_SOURCES.indexOf(a.source) - IMPORT_SOURCES.indexOf(b.source));
    for (const g of given) checkSourceDir(g.dir, SOURCE_DIR_LABEL[g.source]);
    return given;
  }

  private discover(dirs: ImportDirs, heads: boolean): { found: FoundSession[]; sources: SourceScan[]; dirOf: Map<FoundSession, string> } {
    const found: FoundSession[] = [];
    const sources: SourceScan[] = [];
    const dirOf = new Map<FoundSession, string>();
    const keys = new Set<string>();
    for (const { source, dir, explicit } of this.sources(dirs)) {
      let d: Discovery;
      try {
        const opts = { heads };
        d = source === 'claude-code' ? discoverClaude(dir, this.limits, opts) : source === 'codex' ? discoverCodex(dir, this.limits, opts) : discoverCursor(dir, this.limits, opts);
      } catch (e) {
        if (explicit || !(e instanceof ImportError)) throw e;
        sources.push({ source, dir, error: { code: e.code, message: e.message }, skipped: {} });
        continue;
      }
      for (const s of d.sessions) {
        if (keys.has(s.key)) continue; // the same session in two folders: the first folder's
        keys.add(s.key);
        found.push(s);
        dirOf.set(s, dir);
      }
      sources.push({ source, dir, error: null, skipped: d.skipped });
    }
    return { found, sources, dirOf };
  }

  private statements?: { row: ReturnType<VoxStore['db']['prepare']>; write: ReturnType<VoxStore['db']['prepare']> };
  private get stmts() {
    return (this.statements ??= {
      row: this.store.db.prepare('SELECT size, mtime_ms, offset, lines, state FROM import_files WHERE path = ?'),
      write: this.store.db.prepare(
        `INSERT INTO import_files (path, source, thread_id, size, mtime_ms, offset, lines, state, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, offset = excluded.offset, lines = excluded.lines,
           state = excluded.state, imported_at = excluded.imported_at, thread_id = excluded.thread_id`,
      ),
    });
  }

  private row(file: string): FileRow | undefined {
    return this.stmts.row.get(file) as FileRow | undefined;
  }

  scan(dirs: ImportDirs = {}): ScanResult {
    const { found, sources } = this.discover(dirs, true);
    const sessions = found.map((s): ScannedSession => {
      const done = s.files.filter((f) => {
        const r = this.row(f.path);
        return r && r.size === f.size && r.mtime_ms === f.mtimeMs;
      }).length;
      const any = s.files.some((f) => this.row(f.path) !== undefined);
      return {
        id: s.key, source: s.source, project: s.project, date: s.date, title: s.title, size: s.size, files: s.files.length,
        imported: done === s.files.length ? 'yes' : any ? 'partial' : 'no',
      };
    });
    sessions.sort((a, b) => b.date - a.date || a.id.localeCompare(b.id));
    return { sessions, sources };
  }

  /** Imports the sessions `ids` names (all found, when absent); `onProgress` after each session. */
  import(dirs: ImportDirs = {}, ids?: readonly string[], onProgress?: (done: number, total: number, title: string) => void): ImportResult {
    const { found, sources, dirOf } = this.discover(dirs, false);
    let chosen = found;
    if (ids) {
      const byKey = new Map(found.map((s) => [s.key, s]));
      const missing = ids.filter((id) => !byKey.has(id));
      if (missing.length > 0) throw new ImportError('unknownSession', `No session ${missing.join(', ')} in the folders scanned; scan again.`);
      chosen = ids.map((id) => byKey.get(id)!);
    }
    const counts = new Map<string, SourceCounts>();
    for (const s of sources) {
      if (s.error) continue;
      const c: SourceCounts = { source: s.source, dir: s.dir, sessions: 0, files: 0, unchangedFiles: 0, ...emptyTally() };
      if (!ids) for (const [k, v] of Object.entries(s.skipped)) c.skipped[k] = v;
      counts.set(`${s.source}\0${s.dir}`, c);
    }
    const apply = applier(this.store.db);
    chosen.forEach((session, i) => {
      const c = counts.get(`${session.source}\0${dirOf.get(session)!}`)!;
      c.sessions++;
      // One transaction per session (its files together): what another process sees is a whole session or none of it.
      this.store.transact((_append, appendAt) => {
        for (const file of session.files) {
          c.files++;
          if (!this.importFile(session, file, c, apply, appendAt as AppendAt)) c.unchangedFiles++;
        }
      });
      onProgress?.(i + 1, chosen.length, session.title);
    });
    return { sources: [...counts.values()] };
  }

  /** One file, inside its session's transaction; false when it had not changed since its last import. */
  private importFile(session: FoundSession, file: SessionFile, c: SourceCounts, apply: ReturnType<typeof applier>, appendAt: AppendAt): boolean {
    {
      let st: fs.Stats;
      try {
        st = fs.statSync(file.path);
      } catch {
        c.skipped.unreadableFile = (c.skipped.unreadableFile ?? 0) + 1;
        return true;
      }
      let size = st.size;
      let mtimeMs = Math.trunc(st.mtimeMs);
      if (file.kind === 'cursorStore') {
        const wal = fs.existsSync(`${file.path}-wal`) ? fs.statSync(`${file.path}-wal`) : null;
        size += wal?.size ?? 0;
        mtimeMs = Math.trunc(Math.max(st.mtimeMs, wal?.mtimeMs ?? 0));
      }
      const row = this.row(file.path);
      if (row && row.size === size && row.mtime_ms === mtimeMs) return false;
      const tally = emptyTally();
      let result;
      try {
        result = file.kind === 'cursorStore' ? this.parseCursor(session, file, row, tally) : this.parseJsonl(session, file, row, size, tally);
      } catch (e) {
        if (!(e instanceof ImportError)) throw e;
        c.skipped[e.code] = (c.skipped[e.code] ?? 0) + 1; // a store that is not Cursor's, an unreadable file: skipped, the rest goes on
        return true;
      }
      if (result.unchanged) {
        this.writeRow(file, session, size, mtimeMs, result.offset, result.lines, result.state);
        return false;
      }
      const applied = apply(result.events, appendAt);
      tally.threads = applied.threads;
      tally.messages = applied.messages;
      tally.toolCalls = applied.toolCalls;
      tally.toolErrors = applied.toolErrors;
      addTally(c, tally);
      this.writeRow(file, session, size, mtimeMs, result.offset, result.lines, result.state);
      return true;
    }
  }

  private writeRow(file: SessionFile, session: FoundSession, size: number, mtimeMs: number, offset: number, lines: number, state: FileState): void {
    this.stmts.write.run(file.path, session.source, state.builder.threadId, size, mtimeMs, offset, lines, JSON.stringify(state), this.now());
  }

  private threadOf(session: FoundSession, file: SessionFile): string {
    return file.kind === 'sidechain' ? claudeChildThreadId(session.threadId, file.agentId!) : session.threadId;
  }

  private parseJsonl(session: FoundSession, file: SessionFile, row: FileRow | undefined, size: number, tally: ImportTally) {
    // A grown file continues from the last offset with the saved state; a shrunk or rewritten one starts over.
    const resume = row && row.state && size >= row.offset ? (JSON.parse(row.state) as FileState) : null;
    const start = resume ? row!.offset : 0;
    const state: FileState = resume ?? { builder: newBuilderState(this.threadOf(session, file)) };
    const parentThreadId = file.kind === 'sidechain' ? session.threadId : null;
    const b = new ThreadBuilder(session.source, state.builder, tally, {
      title: file.kind === 'sidechain' ? (file.description ?? null) : null, parentThreadId, sourceId: file.kind === 'sidechain' ? `${session.sessionId}/${file.agentId}` : session.sessionId,
    });
    let fallbackTime = file.mtimeMs;
    let read;
    if (session.source === 'claude-code') {
      const ctx = { sidechain: file.kind === 'sidechain', warmup: state.warmup ?? false, fallbackTime };
      read = readJsonl(file.path, start, size, this.limits.maxLineBytes, tally, (v) => claudeLine(v, b, tally, ctx));
      state.warmup = ctx.warmup;
      fallbackTime = ctx.fallbackTime;
    } else {
      const ctx: CodexLineContext = { ...(state.codex ?? { lastTotals: null, exitCodes: {}, line: 0 }), fallbackTime };
      read = readJsonl(file.path, start, size, this.limits.maxLineBytes, tally, (v) => codexLine(v, b, tally, ctx));
      const { fallbackTime: t, ...rest } = ctx;
      state.codex = rest;
      fallbackTime = t;
    }
    const events = state.warmup ? [] : b.finish(fallbackTime);
    if (file.kind === 'sidechain' && !state.warmup) this.linkParentRun(events, session, file);
    return { unchanged: false, events, offset: read.end, lines: (row && resume ? row.lines : 0) + read.lines, state };
  }

  /**
   * The run whose Task/Agent call started a sub-agent, recorded on its child thread: a 2.1
   * `.meta.json` names the call (`toolUseId`); in 2.0 the call's result ends with `agentId: <id>`.
   * The session's own file is applied first (same transaction), so the call is in the store.
   */
  private linkParentRun(events: ReturnType<ThreadBuilder['finish']>, session: FoundSession, file: SessionFile): void {
    let runId: string | undefined;
    if (file.toolUseId) {
      const runs = this.store.db.prepare('SELECT id FROM runs WHERE thread_id = ?').all(session.threadId) as { id: string }[];
      const item = this.store.db.prepare('SELECT 1 FROM turn_items WHERE id = ?');
      runId = runs.find((r) => item.get(importedItemId(r.id, file.toolUseId!)) !== undefined)?.id;
    } else if (file.agentId) {
      const row = this.store.db.prepare(
        `SELECT t.run_id AS r FROM turn_items t JOIN runs ON runs.id = t.run_id
         WHERE runs.thread_id = ? AND t.kind = 'toolCall' AND t.tool_name IN ('Task', 'Agent') AND instr(t.content, ?) > 0 LIMIT 1`,
      ).get(session.threadId, `agentId: ${file.agentId}`) as { r: string } | undefined;
      runId = row?.r;
    }
    if (!runId) return;
    for (const e of events) if (e.event.type === 'thread.created') e.event = { ...e.event, parentRunId: runId };
  }

  private parseCursor(session: FoundSession, file: SessionFile, row: FileRow | undefined, tally: ImportTally) {
    const store = readCursorStore(file.path);
    const saved = row?.state ? (JSON.parse(row.state) as FileState) : null;
    const fresh = (): FileState => ({ builder: newBuilderState(session.threadId), cursor: { root: '', count: 0 } });
    let state = saved ?? fresh();
    if (state.cursor && state.cursor.root === store.meta.latestRootBlobId) {
      return { unchanged: true, events: [], offset: 0, lines: state.cursor.count, state };
    }
    if (!state.cursor || state.cursor.count > store.messages.length) state = fresh();
    if (store.unreadable > 0) tally.skipped.unreadableBlob = (tally.skipped.unreadableBlob ?? 0) + store.unreadable;
    const b = new ThreadBuilder('cursor', state.builder, tally, {
      title: store.meta.name, cwd: workspacePath(store.workspace), sourceId: session.sessionId,
    });
    b.setModel(store.meta.model);
    const base = store.meta.createdAt ?? file.mtimeMs;
    cursorMessages(store.messages, state.cursor!.count, b, tally, base);
    const events = b.finish(base + store.messages.length);
    state.cursor = { root: store.meta.latestRootBlobId, count: store.messages.length };
    return { unchanged: false, events, offset: 0, lines: store.messages.length, state };
  }
}
