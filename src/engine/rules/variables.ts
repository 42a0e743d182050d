/**
 * System prompt `$variables` (SPEC 6.2), resolved in one pass: one regex alternating over the
 * eight names, each match replaced by its value once — a value that itself contains `$user_locale`
 * is never substituted again. Unknown `$words`, a lone `$` and `$$` stay as they are. The clock,
 * locale, timezone and platform are inputs, so tests inject them.
 */

export const VARIABLE_NAMES = [
  'current_datetime', 'user_timezone', 'user_locale', 'user_language', 'user_platform', 'workspace_root', 'git_branch', 'active_spoke',
] as const;
export type VariableName = (typeof VARIABLE_NAMES)[number];
export type VariableValues = Record<VariableName, string>;

/**
 * `$name` not followed by another name character (so `$git_branches` is unknown and untouched),
 * and not preceded by `$` (`$$git_branch` stays, an escape).
 */
const VARIABLE = new RegExp(`(?<!\\$)\\$(${[...VARIABLE_NAMES].sort((a, b) => b.length - a.length).join('|')})(?![A-Za-z0-9_])`, 'g');

export function resolveVariables(text: string, values: VariableValues): string {
  return text.replace(VARIABLE, (_m, name: VariableName) => values[name]);
}

export interface VariableInputs {
  now: Date;
  /** IANA zone, e.g. Europe/Paris. */
  timeZone: string;
  /** BCP-47 tag, e.g. fr-FR. */
  locale: string;
  /** `process.platform/process.arch`, e.g. linux/x64. */
  platform: string;
  /** The workspace root folder's name. */
  workspaceRoot: string;
  /** The current branch; 'HEAD' when detached, '' outside a repository. */
  gitBranch: string;
  /** 'planning' in Plan mode, else 'coding'. */
  activeSpoke: 'planning' | 'coding';
}

const pad = (n: number, w = 2) => String(Math.abs(Math.trunc(n))).padStart(w, '0');

/** ISO-8601 with the zone's offset (`2026-12-01T16:05:09+01:00`), computed for `timeZone`. */
export function isoWithOffset(now: Date, timeZone: string): string {
  let parts: Record<string, string>;
  try {
    parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
        .formatToParts(now)
        .map((p) => [p.type, p.value]),
    );
  } catch {
    return now.toISOString(); // an unknown zone: UTC
  }
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  const offsetMin = Math.round((asUtc - Math.floor(now.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const off = `${sign}${pad(offsetMin / 60)}:${pad(offsetMin % 60)}`;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${off}`;
}

export function variableValues(i: VariableInputs): VariableValues {
  const language = i.locale.split(/[-_]/)[0]?.toLowerCase() ?? '';
  return {
    current_datetime: isoWithOffset(i.now, i.timeZone),
    user_timezone: i.timeZone,
    user_locale: i.locale,
    user_language: language,
    user_platform: i.platform,
    workspace_root: i.workspaceRoot,
    git_branch: i.gitBranch,
    active_spoke: i.activeSpoke,
  };
}
