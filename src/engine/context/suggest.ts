/**
 * What an `@` in the composer offers for a query: the special mentions (@problems, @terminal,
 * @git, @selection), workspace files and folders (./workspace-files.ts), recent commits for
 * `git:<query>`, past threads by title and manual rules (SPEC 6.1) — each ranked with ./fuzzy.ts, specials first when they
 * match as well as a file does.
 */
import { mcpMentionTarget, type MentionKind, type MentionSuggestion } from '../../protocol/mentions';
import { git } from '../git/git';
import type { VoxStore } from '../store/store';
import { fuzzyScore } from './fuzzy';
import type { WorkspaceFiles } from './workspace-files';

/** Suggestions when the client names no limit. */
export const DEFAULT_MENTION_SUGGESTIONS = 12;
/** Past threads searched by title. */
export const MENTION_THREAD_CANDIDATES = 200;
/** Commits offered after `git:`. */
export const MENTION_GIT_COMMITS = 30;
/** Extra score of a special mention, so `@pro` puts @problems above a file named `pro…`. */
const SPECIAL_BONUS = 20;

const SPECIALS: ReadonlyArray<{ kind: MentionKind; label: string; detail: string }> = [
  { kind: 'problems', label: 'problems', detail: 'Workspace problems (errors and warnings)' },
  { kind: 'terminal', label: 'terminal', detail: 'Recent output of the active terminal' },
  { kind: 'git', label: 'git', detail: 'Working-tree changes (git diff HEAD); git:<commit> for a commit' },
  { kind: 'selection', label: 'selection', detail: 'The selection in the active editor' },
];

export interface SuggestDeps {
  files: WorkspaceFiles;
  store: VoxStore;
  workspaceRoot: string;
  /** The enabled manual rules (../rules/), offered as `@name`. */
  manualRules?: () => Array<{ name: string; description: string | null }>;
  /** Resources of the connected MCP servers (../mcp/), offered as `mcp` mentions. */
  mcpResources?: () => Array<{ server: string; uri: string; name: string; description: string | null }>;
}

/** Extra score of a manual rule, so `@sty` puts the rule `style` above `stylesheet.css`. */
const RULE_BONUS = 10;

interface Scored { item: MentionSuggestion; score: number }

export async function suggestMentions(deps: SuggestDeps, query: string, limit = DEFAULT_MENTION_SUGGESTIONS): Promise<MentionSuggestion[]> {
  const out: Scored[] = [];
  const add = (item: MentionSuggestion, score: number | null) => {
    if (score !== null) out.push({ item, score });
  };
  const gitQuery = /^git:(.*)$/i.exec(query);
  if (gitQuery) {
    for (const c of await recentCommits(deps.workspaceRoot)) {
      add({ kind: 'git', target: c.sha, label: `git:${c.sha}`, detail: c.subject }, fuzzyScore(gitQuery[1]!, `${c.sha} ${c.subject}`));
    }
  } else {
    for (const s of SPECIALS) {
      const score = fuzzyScore(query, s.label);
      add({ kind: s.kind, target: null, label: s.label, detail: s.detail }, score === null ? null : score + SPECIAL_BONUS);
    }
    for (const r of deps.manualRules?.() ?? []) {
      const score = fuzzyScore(query, r.name);
      add({ kind: 'rule', target: r.name, label: r.name, detail: r.description ? `rule · ${r.description}` : 'rule' }, score === null ? null : score + RULE_BONUS);
    }
    for (const r of deps.mcpResources?.() ?? []) {
      const label = `${r.server}:${r.name}`;
      const score = fuzzyScore(query, `${label} ${r.uri}`);
      add({ kind: 'mcp', target: mcpMentionTarget(r.server, r.uri), label, detail: r.description ? `MCP resource · ${r.description}` : `MCP resource · ${r.uri}` }, score);
    }
    const listing = await deps.files.list();
    for (const f of listing.files) add({ kind: 'file', target: f, label: f, detail: 'file' }, fuzzyScore(query, f));
    for (const d of listing.folders) {
      const score = fuzzyScore(query, d);
      add({ kind: 'folder', target: d, label: `${d}/`, detail: 'folder' }, score);
    }
    for (const t of deps.store.listThreadsPage({ limit: MENTION_THREAD_CANDIDATES }).threads) {
      const score = fuzzyScore(query, t.title);
      add({ kind: 'thread', target: t.id, label: t.title, detail: `thread · ${new Date(t.updatedAt).toISOString().slice(0, 10)}` }, score === null ? null : score - 1);
    }
  }
  out.sort((a, b) => b.score - a.score || a.item.label.length - b.item.label.length || (a.item.label < b.item.label ? -1 : 1));
  return out.slice(0, limit).map((s) => s.item);
}

async function recentCommits(cwd: string): Promise<Array<{ sha: string; subject: string }>> {
  try {
    const text = await git(['log', `-n${MENTION_GIT_COMMITS}`, '--format=%h%x00%s'], { cwd });
    return text.split('\n').filter(Boolean).map((l) => {
      const [sha, subject] = l.split('\0');
      return { sha: sha ?? '', subject: subject ?? '' };
    });
  } catch {
    return []; // not a repository, or no commits yet: nothing to offer
  }
}
