/**
 * Keeping provider secrets where they belong. Every key the engine is handed (by the host, when
 * a model is resolved) is remembered here — in memory, for this process — so that:
 *   - `redact(text)` removes it, and every credential the maintained rule set finds
 *     (secret-scan.ts), from text before it is stored (every event the store appends), logged
 *     or shown;
 *   - `childEnv()` gives child processes (git, `run_command` shells) the user's environment
 *     without the provider secrets: the well-known key variables and any variable whose value
 *     is a remembered secret.
 */

import { findSecrets } from './secret-scan';

/** Environment variables that hold provider keys (never passed to a child process). */
export const SECRET_ENV_NAMES: readonly string[] = [
  'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENROUTER_API_KEY', 'AZURE_OPENAI_API_KEY',
  'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'MISTRAL_API_KEY', 'GROQ_API_KEY', 'DEEPSEEK_API_KEY', 'XAI_API_KEY', 'VOX_COMPAT_API_KEY',
];
/** Prefix of the environment variables of named endpoints' keys (providers/compat-endpoints.ts). */
export const SECRET_ENV_PREFIXES: readonly string[] = ['VOX_COMPAT_API_KEY_'];
/** Shortest value remembered as a secret (shorter strings would redact ordinary words). */
export const MIN_SECRET_LENGTH = 8;
/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';


const remembered = new Set<string>();

/** Remembers a secret value for redaction and environment scrubbing (ignored when too short to be one). */
export function rememberSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) remembered.add(value);
}

/** For tests: forget every remembered secret. */
export function forgetSecrets(): void {
  remembered.clear();
}

/**
 * `text` with every remembered secret and every credential the rule set finds (secret-scan.ts:
 * gitleaks' rules and Vox's own) replaced by REDACTED.
 */
export function redact(text: string): string {
  let out = text;
  for (const s of remembered) if (out.includes(s)) out = out.split(s).join(REDACTED);
  const spans = findSecrets(out);
  if (spans.length === 0) return out;
  let result = '';
  let at = 0;
  for (const s of spans) {
    result += out.slice(at, s.start) + REDACTED;
    at = s.end;
  }
  return result + out.slice(at);
}

/** The environment for a child process: `base` (default this process's) without provider secrets, plus `extra`. */
export function childEnv(base: NodeJS.ProcessEnv = process.env, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || SECRET_ENV_NAMES.includes(k) || SECRET_ENV_PREFIXES.some((p) => k.startsWith(p)) || remembered.has(v)) continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Strings shorter than this are never scanned by `redactDeep` (ids, enums, numbers as text). */
const MIN_SCANNED_LENGTH = 8;

/**
 * `value` with `redact` applied to every string in it, at any depth (the store runs every event
 * through it before it is written). A string that held JSON and would stop parsing after a
 * redaction (a span that crossed an escape) is redacted value by value instead, so it stays JSON.
 * Returns `value` itself when nothing changed.
 */
export function redactDeep<T>(value: T): T {
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (typeof v === 'string') return v.length < MIN_SCANNED_LENGTH ? v : redactString(v);
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const w = walk(v[i]);
      if (w !== v[i]) (out ??= [...v])[i] = w;
    }
    return out ?? v;
  }
  if (v && typeof v === 'object') {
    let out: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(v)) {
      const w = walk(x);
      if (w !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = w;
    }
    return out ?? v;
  }
  return v;
}

function redactString(s: string): string {
  const r = redact(s);
  if (r === s) return s;
  const first = s.trimStart()[0];
  if (first !== '{' && first !== '[') return r;
  let parsed: unknown;
  try {
    parsed = JSON.parse(s);
  } catch {
    return r; // was not JSON: plain text redaction
  }
  try {
    JSON.parse(r);
    return r;
  } catch {
    return JSON.stringify(walk(parsed));
  }
}
