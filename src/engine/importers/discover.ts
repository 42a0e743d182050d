/**
 * Finding sessions on disk, per source, without parsing them whole: each session with its files
 * (a Claude Code session with its sub-agent files, a Codex session with its rollouts, a Cursor
 * chat with its store), its project, date, size and a title read from the file's head. Files over
 * the size limit, beyond the count limit, empty resume stubs and sidechains without a session are
 * skipped and counted by reason. A missing or non-folder source directory is a typed ImportError.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deriveSubagentFromTask } from '../ids/ids';
import { readCursorStore, userQuery, workspacePath } from './cursor';
import { headLines } from './jsonl';
import { ImportError, importedThreadId, SCAN_HEAD_BYTES, titleFrom, type ImportLimits, type ImportSource } from './types';

export interface SessionFile {
  path: string;
  kind: 'session' | 'sidechain' | 'rollout' | 'cursorStore';
  size: number;
  mtimeMs: number;
  /** Sidechains: the agent id (the child thread derives from it), and what `.meta.json` says. */
  agentId?: string;
  description?: string | null;
  toolUseId?: string | null;
}

export interface FoundSession {
  /** `<source>:<session id>`: what `importExternalSessions {ids}` names. */
  key: string;
  source: ImportSource;
  sessionId: string;
  threadId: string;
  project: string | null;
  title: string;
  date: number;
  size: number;
  files: SessionFile[];
}

export interface Discovery { sessions: FoundSession[]; skipped: Record<string, number> }

/** `heads`: read each file's head for the title and project (the scan shows them; an import does not need them). */
export interface DiscoverOptions { heads: boolean }
/** How much of a 2.0 sub-agent file is read to learn which session it belongs to (its first line names it). */
const SIDECHAIN_HEAD_BYTES = 64 * 1024;

function listDir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Checks the source folder: absent or not a folder is a typed error naming it. */
export function checkSourceDir(dir: string, what: string): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw new ImportError('missingDir', `${what} folder ${dir} does not exist.`);
  }
  if (!st.isDirectory()) throw new ImportError('notADirectory', `${what} path ${dir} is not a folder.`);
}

const bump = (skipped: Record<string, number>, reason: string) => void (skipped[reason] = (skipped[reason] ?? 0) + 1);

class FileBudget {
  private n = 0;
  constructor(private readonly limits: ImportLimits, private readonly skipped: Record<string, number>) {}
  /** The file's stat when it may be imported; otherwise counts why not. */
  take(file: string): fs.Stats | null {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      bump(this.skipped, 'unreadableFile');
      return null;
    }
    if (++this.n > this.limits.maxFilesPerSource) {
      bump(this.skipped, 'tooManyFiles');
      return null;
    }
    if (st.size > this.limits.maxFileBytes) {
      bump(this.skipped, 'fileTooLarge');
      return null;
    }
    return st;
  }
}

const fileOf = (p: string, st: fs.Stats, kind: SessionFile['kind'], extra: Partial<SessionFile> = {}): SessionFile => ({ path: p, kind, size: st.size, mtimeMs: Math.trunc(st.mtimeMs), ...extra });

// ------------------------------------------------------------------ Claude Code

/** The title and cwd a Claude Code session's head shows. */
function claudeHead(file: string): { title: string | null; cwd: string | null; sessionId: string | null; firstPrompt: string | null } {
  let title: string | null = null;
  let cwd: string | null = null;
  let sessionId: string | null = null;
  let firstPrompt: string | null = null;
  for (const l of headLines(file, SCAN_HEAD_BYTES)) {
    const j = l as { type?: string; cwd?: string; sessionId?: string; summary?: string; isMeta?: boolean; isCompactSummary?: boolean; message?: { content?: unknown } };
    cwd ??= typeof j.cwd === 'string' ? j.cwd : null;
    sessionId ??= typeof j.sessionId === 'string' ? j.sessionId : null;
    if (j.type === 'summary' && typeof j.summary === 'string') title ??= j.summary;
    if (j.type === 'user' && !j.isMeta && !j.isCompactSummary && firstPrompt === null) {
      const c = j.message?.content;
      const text = typeof c === 'string' ? c : Array.isArray(c) ? (c as { type?: string; text?: string }[]).filter((b) => b.type === 'text').map((b) => b.text).join('\n') : '';
      if (text && !/^\s*<(command-|local-command|task-notification)/.test(text)) firstPrompt = text;
    }
  }
  return { title, cwd, sessionId, firstPrompt };
}

export function discoverClaude(configDir: string, limits: ImportLimits, opts: DiscoverOptions = { heads: true }): Discovery {
  const root = path.join(configDir, 'projects');
  checkSourceDir(configDir, 'Claude Code config');
  const skipped: Record<string, number> = {};
  const budget = new FileBudget(limits, skipped);
  const sessions = new Map<string, FoundSession>();
  const pendingSidechains: { sessionId: string; file: SessionFile }[] = [];
  for (const project of listDir(root).filter((d) => d.isDirectory())) {
    const dir = path.join(root, project.name);
    for (const e of listDir(dir)) {
      const p = path.join(dir, e.name);
      if (e.isFile() && e.name.endsWith('.jsonl')) {
        const st = budget.take(p);
        if (!st) continue;
        const agent = /^agent-(.+)\.jsonl$/.exec(e.name);
        if (agent) {
          // 2.0.x: a sub-agent beside its session; its lines name the session.
          if (st.size === 0) {
            bump(skipped, 'emptyFile');
            continue;
          }
          const first = headLines(p, SIDECHAIN_HEAD_BYTES, 1)[0] as { sessionId?: unknown } | undefined;
          const head = { sessionId: typeof first?.sessionId === 'string' ? first.sessionId : null };
          if (!head.sessionId) {
            bump(skipped, 'orphanSidechain');
            continue;
          }
          pendingSidechains.push({ sessionId: head.sessionId, file: fileOf(p, st, 'sidechain', { agentId: agent[1]! }) });
          continue;
        }
        const sessionId = e.name.slice(0, -'.jsonl'.length);
        if (st.size === 0) {
          bump(skipped, 'emptyFile'); // a resume stub
          continue;
        }
        const head = opts.heads ? claudeHead(p) : { title: null, cwd: null, firstPrompt: null };
        sessions.set(sessionId, {
          key: `claude-code:${sessionId}`, source: 'claude-code', sessionId, threadId: importedThreadId('claude-code', sessionId),
          project: head.cwd ?? project.name, title: head.title ?? (head.firstPrompt ? titleFrom(head.firstPrompt) : sessionId),
          date: Math.trunc(st.mtimeMs), size: st.size, files: [fileOf(p, st, 'session')],
        });
      } else if (e.isDirectory()) {
        // 2.1.x: <sessionId>/subagents/agent-<id>.jsonl (+ .meta.json)
        const sub = path.join(p, 'subagents');
        for (const f of listDir(sub)) {
          const agent = /^agent-(.+)\.jsonl$/.exec(f.name);
          if (!f.isFile() || !agent) continue;
          const fp = path.join(sub, f.name);
          const st = budget.take(fp);
          if (!st) continue;
          if (st.size === 0) {
            bump(skipped, 'emptyFile');
            continue;
          }
          let meta: { description?: string; toolUseId?: string } = {};
          try {
            meta = JSON.parse(fs.readFileSync(path.join(sub, `agent-${agent[1]}.meta.json`), 'utf8')) as typeof meta;
          } catch {
            // no meta: the title comes from the first prompt
          }
          pendingSidechains.push({
            sessionId: e.name,
            file: fileOf(fp, st, 'sidechain', { agentId: agent[1]!, description: meta.description ?? null, toolUseId: meta.toolUseId ?? null }),
          });
        }
      }
    }
  }
  for (const { sessionId, file } of pendingSidechains) {
    const s = sessions.get(sessionId);
    if (!s) {
      bump(skipped, 'sidechainWithoutSession'); // e.g. the warm-ups of an empty resume stub
      continue;
    }
    s.files.push(file);
    s.size += file.size;
    s.date = Math.max(s.date, file.mtimeMs);
  }
  return { sessions: [...sessions.values()], skipped };
}

/** The child thread of a Claude Code sub-agent. */
export function claudeChildThreadId(parentThreadId: string, agentId: string): string {
  return deriveSubagentFromTask(parentThreadId, agentId);
}

// ------------------------------------------------------------------ Codex

const ROLLOUT = /^rollout-.*?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

function walkJsonl(dir: string, depth: number, out: string[]): void {
  for (const e of listDir(dir)) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && depth > 0) walkJsonl(p, depth - 1, out);
    else if (e.isFile() && e.name.endsWith('.jsonl')) out.push(p);
  }
}

export function discoverCodex(codexHome: string, limits: ImportLimits, opts: DiscoverOptions = { heads: true }): Discovery {
  checkSourceDir(codexHome, 'Codex home');
  const skipped: Record<string, number> = {};
  const budget = new FileBudget(limits, skipped);
  const files: string[] = [];
  walkJsonl(path.join(codexHome, 'sessions'), 4, files);
  files.sort();
  const sessions = new Map<string, FoundSession>();
  for (const p of files) {
    const st = budget.take(p);
    if (!st) continue;
    if (st.size === 0) {
      bump(skipped, 'emptyFile');
      continue;
    }
    let sessionId = ROLLOUT.exec(path.basename(p))?.[1] ?? null;
    let cwd: string | null = null;
    let prompt: string | null = null;
    for (const l of opts.heads || sessionId === null ? headLines(p, SCAN_HEAD_BYTES) : []) {
      const j = l as { type?: string; payload?: { type?: string; id?: string; cwd?: string; role?: string; content?: { text?: string }[] } };
      if (j.type === 'session_meta') {
        sessionId ??= j.payload?.id ?? null;
        cwd ??= j.payload?.cwd ?? null;
      }
      if (prompt === null && j.type === 'response_item' && j.payload?.type === 'message' && j.payload.role === 'user') {
        const text = (j.payload.content ?? []).map((c) => c.text ?? '').join('\n');
        if (!/^\s*<(environment_context|user_instructions|permissions|skills_instructions|INSTRUCTIONS)|^\s*# AGENTS\.md/.test(text)) prompt = text;
      }
    }
    sessionId ??= path.basename(p, '.jsonl');
    const file = fileOf(p, st, 'rollout');
    const s = sessions.get(sessionId);
    if (s) {
      s.files.push(file); // a resume written to a new rollout continues the thread
      s.size += st.size;
      s.date = Math.max(s.date, file.mtimeMs);
      continue;
    }
    sessions.set(sessionId, {
      key: `codex:${sessionId}`, source: 'codex', sessionId, threadId: importedThreadId('codex', sessionId),
      project: cwd, title: prompt ? titleFrom(prompt) : sessionId, date: file.mtimeMs, size: st.size, files: [file],
    });
  }
  return { sessions: [...sessions.values()], skipped };
}

// ------------------------------------------------------------------ Cursor

export function discoverCursor(cursorDir: string, limits: ImportLimits, opts: DiscoverOptions = { heads: true }): Discovery {
  checkSourceDir(cursorDir, 'Cursor');
  const skipped: Record<string, number> = {};
  const budget = new FileBudget(limits, skipped);
  const sessions: FoundSession[] = [];
  for (const ws of listDir(path.join(cursorDir, 'chats')).filter((d) => d.isDirectory())) {
    for (const agent of listDir(path.join(cursorDir, 'chats', ws.name)).filter((d) => d.isDirectory())) {
      const p = path.join(cursorDir, 'chats', ws.name, agent.name, 'store.db');
      if (!fs.existsSync(p)) continue;
      const st = budget.take(p);
      if (!st) continue;
      let wal: fs.Stats | null = null;
      try {
        wal = fs.statSync(`${p}-wal`);
      } catch {
        // no write-ahead log
      }
      let title = agent.name;
      let project: string | null = null;
      try {
        if (!opts.heads) throw new Skip();
        const store = readCursorStore(p);
        project = workspacePath(store.workspace);
        const first = store.messages.find((m) => (m.value as { role?: string }).role === 'user' && userQuery(textOfCursor(m.value)) !== null);
        title = store.meta.name ?? (first ? titleFrom(userQuery(textOfCursor(first.value))!) : agent.name);
      } catch (e) {
        if (!(e instanceof Skip)) {
          bump(skipped, 'notACursorStore');
          continue;
        }
      }
      const size = st.size + (wal?.size ?? 0);
      const mtimeMs = Math.trunc(Math.max(st.mtimeMs, wal?.mtimeMs ?? 0));
      sessions.push({
        key: `cursor:${agent.name}`, source: 'cursor', sessionId: agent.name, threadId: importedThreadId('cursor', agent.name),
        project, title, date: mtimeMs, size, files: [{ path: p, kind: 'cursorStore', size, mtimeMs }],
      });
    }
  }
  return { sessions, skipped };
}

/** Not an error: the import reads the store itself, the scan's title is not needed. */
class Skip {}

function textOfCursor(v: unknown): string {
  const c = (v as { content?: unknown }).content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? (c as { type?: string; text?: string }[]).filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n') : '';
}
