/**
 * Reading and writing rule files inside the workspace: `.vox/rules/*.md`, the peer files
 * (`CLAUDE.md`, `AGENTS.md`, `.clinerules` as a file or a folder of .md files) and the toggle file
 * `.vox/rules/.disabled.json`. Confined: `.vox`, `.vox/rules` and the files may not be symbolic
 * links, files are opened with O_NOFOLLOW and must be regular, and each is bounded in size. A file
 * that cannot be read or parsed becomes an error entry; it never hides the others.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RuleError } from './errors';
import { parseRuleFile, type Rule } from './parse';

/** Largest rule file read (bigger: listed with `rule/tooLarge`). */
export const MAX_RULE_FILE_BYTES = 64 * 1024;
/** Most rule files read from one folder (the rest are listed as an error). */
export const MAX_RULE_FILES = 200;
/** Where workspace rules live, relative to the workspace root. */
export const WORKSPACE_RULES_DIR = '.vox/rules';
/** The workspace's toggle file: names of disabled rules. */
export const DISABLED_FILE = '.vox/rules/.disabled.json';
/** Peer agents' rule files read as always rules (setting vox.readPeerRuleFiles). */
export const PEER_FILES = ['CLAUDE.md', 'AGENTS.md'] as const;
export const CLINERULES = '.clinerules';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

export interface RuleFileError { source: string; line: number | null; code: string; message: string }

/** Reads a regular file of at most MAX_RULE_FILE_BYTES (null: absent). */
export function readConfined(root: string, rel: string): string | null {
  const file = path.join(root, rel);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return null;
  }
  if (st.isSymbolicLink()) throw new RuleError('outsideWorkspace', `${rel}: a symbolic link; rules are only read from inside the workspace`, rel);
  if (!st.isFile()) throw new RuleError('invalidRule', `${rel}: not a regular file`, rel);
  if (st.size > MAX_RULE_FILE_BYTES) throw new RuleError('tooLarge', `${rel}: larger than ${MAX_RULE_FILE_BYTES} bytes; not read`, rel);
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
    try {
      if (!fs.fstatSync(fd).isFile()) throw new RuleError('invalidRule', `${rel}: not a regular file`, rel);
      return fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if (e instanceof RuleError) throw e;
    throw new RuleError('io', `${rel}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`, rel);
  }
}

/** A directory inside the workspace that is not a symlink (null: absent; error: a link or a file). */
function confinedDir(root: string, rel: string): string[] | null {
  let cur = root;
  for (const part of rel.split('/')) {
    cur = path.join(cur, part);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(cur);
    } catch {
      return null;
    }
    if (st.isSymbolicLink()) throw new RuleError('outsideWorkspace', `${rel}: ${path.relative(root, cur)} is a symbolic link; rules are only read from inside the workspace`, rel);
    if (!st.isDirectory()) return null;
  }
  return fs.readdirSync(cur).sort();
}

export interface LoadedFiles { rules: Rule[]; errors: RuleFileError[] }

function asError(e: unknown, source: string): RuleFileError {
  if (e instanceof RuleError) return { source: e.source ?? source, line: e.line, code: `rule/${e.code}`, message: e.message };
  throw e;
}

/** Every `*.md` of a folder, parsed one by one. */
function readFolder(root: string, dir: string, scope: Rule['scope'], nameOf: (file: string) => string | null): LoadedFiles {
  const out: LoadedFiles = { rules: [], errors: [] };
  let names: string[] | null;
  try {
    names = confinedDir(root, dir);
  } catch (e) {
    out.errors.push(asError(e, dir));
    return out;
  }
  if (!names) return out;
  const md = names.filter((n) => n.toLowerCase().endsWith('.md'));
  if (md.length > MAX_RULE_FILES) out.errors.push({ source: dir, line: null, code: 'rule/tooLarge', message: `${dir}: ${md.length} rule files; only the first ${MAX_RULE_FILES} are read` });
  for (const n of md.slice(0, MAX_RULE_FILES)) {
    const rel = `${dir}/${n}`;
    try {
      const text = readConfined(root, rel);
      if (text === null) continue;
      const rule = parseRuleFile(text, rel, scope);
      const forced = nameOf(n);
      out.rules.push(forced ? { ...rule, name: forced, attach: 'always' } : rule);
    } catch (e) {
      out.errors.push(asError(e, rel));
    }
  }
  return out;
}

export function loadWorkspaceRules(root: string): LoadedFiles {
  return readFolder(root, WORKSPACE_RULES_DIR, 'workspace', () => null);
}

/** A peer rule's name from its file: `CLAUDE.md` → `claude-md`, `.clinerules/style.md` → `clinerules-style`. */
export function peerRuleName(file: string): string {
  return file.replace(/^\./, '').replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').toLowerCase() || 'peer';
}

/** CLAUDE.md, AGENTS.md and .clinerules (a file, or a folder of .md files), as always rules. */
export function loadPeerRules(root: string): LoadedFiles {
  const out: LoadedFiles = { rules: [], errors: [] };
  const asPeer = (rel: string, text: string): Rule => ({
    name: peerRuleName(rel), scope: 'peer', attach: 'always', description: `${rel} (read as an always rule)`, paths: [], body: text.trim(), source: rel, enabledInFile: true,
  });
  for (const rel of PEER_FILES) {
    try {
      const text = readConfined(root, rel);
      if (text !== null && text.trim().length > 0) out.rules.push(asPeer(rel, text));
    } catch (e) {
      out.errors.push(asError(e, rel));
    }
  }
  let st: fs.Stats | null = null;
  try {
    st = fs.lstatSync(path.join(root, CLINERULES));
  } catch {
    st = null;
  }
  if (st?.isDirectory()) {
    // Cline's folder: each .md is its own rule; the front matter is Cline's, so the body is the whole file.
    const names = fs.readdirSync(path.join(root, CLINERULES)).filter((n) => n.toLowerCase().endsWith('.md')).sort().slice(0, MAX_RULE_FILES);
    for (const n of names) {
      const rel = `${CLINERULES}/${n}`;
      try {
        const text = readConfined(root, rel);
        if (text !== null && text.trim().length > 0) out.rules.push({ ...asPeer(rel, text), name: peerRuleName(`clinerules-${n.replace(/\.md$/i, '')}`) });
      } catch (e) {
        out.errors.push(asError(e, rel));
      }
    }
  } else if (st) {
    try {
      const text = readConfined(root, CLINERULES);
      if (text !== null && text.trim().length > 0) out.rules.push(asPeer(CLINERULES, text));
    } catch (e) {
      out.errors.push(asError(e, CLINERULES));
    }
  }
  return out;
}

/** The disabled names of this workspace (a broken file: none, and its error). */
export function readDisabled(root: string): { names: Set<string>; error: RuleFileError | null } {
  try {
    const text = readConfined(root, DISABLED_FILE);
    if (text === null) return { names: new Set(), error: null };
    const parsed = JSON.parse(text) as unknown;
    const list = (parsed as { disabled?: unknown })?.disabled;
    if (!Array.isArray(list) || list.some((n) => typeof n !== 'string')) throw new RuleError('invalidRule', `${DISABLED_FILE}: expected {"disabled": ["name", …]}`, DISABLED_FILE);
    return { names: new Set(list as string[]), error: null };
  } catch (e) {
    if (e instanceof SyntaxError) return { names: new Set(), error: { source: DISABLED_FILE, line: null, code: 'rule/invalidRule', message: `${DISABLED_FILE}: not valid JSON` } };
    return { names: new Set(), error: asError(e, DISABLED_FILE) };
  }
}

/** A rule file written beside its place, not yet in it (stageConfined): `commit` renames it in, `discard` removes it and the folders made for it. */
export interface StagedRuleFile {
  rel: string;
  commit(): void;
  discard(): void;
}

/** Makes `.vox/rules` (refusing links), then writes `rel` there atomically without following links. */
export function writeConfined(root: string, rel: string, text: string): void {
  stageConfined(root, rel, text).commit();
}

/**
 * Checks `rel` and writes its text to a temporary file in `.vox/rules` (made if absent, links
 * refused), so that a caller can stage several files, do what else must succeed with them, and
 * only then put them in place. Every failure is a RuleError; nothing is left after one.
 */
export function stageConfined(root: string, rel: string, text: string): StagedRuleFile {
  if (!rel.startsWith(`${WORKSPACE_RULES_DIR}/`) || rel.slice(WORKSPACE_RULES_DIR.length + 1).includes('/') || rel.includes('..')) {
    throw new RuleError('outsideWorkspace', `${rel}: rules are written only into ${WORKSPACE_RULES_DIR}/`, rel);
  }
  const made: string[] = [];
  // Folders this staging made go with it, when nothing else was put in them meanwhile.
  const unmake = () => {
    for (const d of made.reverse()) {
      try {
        fs.rmdirSync(d);
      } catch {
        // not empty (another staged file) or gone: left as it is
      }
    }
    made.length = 0;
  };
  let cur = root;
  for (const part of WORKSPACE_RULES_DIR.split('/')) {
    cur = path.join(cur, part);
    let st: fs.Stats | null = null;
    try {
      st = fs.lstatSync(cur);
    } catch {
      st = null;
    }
    if (st?.isSymbolicLink()) throw new RuleError('outsideWorkspace', `${path.relative(root, cur)} is a symbolic link; rules are written only inside the workspace`, rel);
    if (st && !st.isDirectory()) throw new RuleError('io', `${path.relative(root, cur)} is not a folder`, rel);
    if (!st) {
      try {
        fs.mkdirSync(cur);
      } catch (e) {
        unmake();
        throw new RuleError('io', `${path.relative(root, cur)}: cannot be made (${(e as NodeJS.ErrnoException).code ?? 'error'})`, rel);
      }
      made.push(cur);
    }
  }
  const file = path.join(root, rel);
  try {
    if (fs.lstatSync(file).isSymbolicLink()) throw new RuleError('outsideWorkspace', `${rel} is a symbolic link; not written`, rel);
  } catch (e) {
    if (e instanceof RuleError) throw e;
  }
  const tmp = `${file}.${process.pid}.tmp`;
  const failed = (e: unknown): never => {
    fs.rmSync(tmp, { force: true });
    unmake();
    throw new RuleError('io', `${rel}: cannot be written (${(e as NodeJS.ErrnoException).code ?? 'error'})`, rel);
  };
  try {
    const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | O_NOFOLLOW, 0o644);
    try {
      fs.writeFileSync(fd, text, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    failed(e);
  }
  return {
    rel,
    commit: () => {
      try {
        fs.renameSync(tmp, file);
      } catch (e) {
        failed(e);
      }
    },
    discard: () => {
      fs.rmSync(tmp, { force: true });
      unmake();
    },
  };
}
