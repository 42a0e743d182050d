/**
 * The `ENABLE_TOOL_SEARCH` rule (SPEC 3.3) for when Vox launches Claude Code as a delegated
 * agent: Claude Code's own tool search (its counterpart of Vox's tool-catalog guard) is forced
 * on where the user left it to Claude Code's heuristic, and left exactly as set where the user
 * made an explicit choice. One pure function; the launcher passes the child's environment through it.
 */

/** The variable Claude Code reads. */
export const TOOL_SEARCH_ENV = 'ENABLE_TOOL_SEARCH';

/** `auto:N`: N a whole percentage (digits only); 0 < N < 100 is a heuristic threshold Vox replaces. */
const AUTO_PERCENT = /^auto:(\d+)$/;
/** Exclusive bounds of the heuristic percentages that are forced to `true`. */
const AUTO_MIN_EXCLUSIVE = 0;
const AUTO_MAX_EXCLUSIVE = 100;

/**
 * The value Vox launches Claude Code with, from what the user set (`undefined`: unset):
 * - unset or empty → `true` (Claude Code's default is its `auto` heuristic);
 * - `auto` → `true`;
 * - `auto:N` with 0 < N < 100 (whole number) → `true`;
 * - `true`, `false` → kept (an explicit choice);
 * - `auto:0`, `auto:100` (and any N ≥ 100) → kept: the ends of the range are explicit "always" /
 *   "never" choices, not a heuristic;
 * - anything else (`AUTO`, `auto:5.5`, `yes`, …) → kept as the user wrote it: Vox does not guess
 *   what an unknown value means, and Claude Code's own handling of it applies.
 */
export function toolSearchValue(value: string | undefined): string {
  if (value === undefined || value === '' || value === 'auto') return 'true';
  const m = AUTO_PERCENT.exec(value);
  if (m) {
    const n = Number(m[1]);
    if (n > AUTO_MIN_EXCLUSIVE && n < AUTO_MAX_EXCLUSIVE) return 'true';
  }
  return value;
}

/** The child environment: every defined variable of `env`, with `ENABLE_TOOL_SEARCH` set by {@link toolSearchValue}. */
export function claudeCodeToolSearchEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  out[TOOL_SEARCH_ENV] = toolSearchValue(env[TOOL_SEARCH_ENV]);
  return out;
}
