/**
 * Keeping provider secrets where they belong. Every key the engine is handed (by the host, when
 * a model is resolved) is remembered here — in memory, for this process — so that:
 *   - `redact(text)` removes it (and anything shaped like a bearer token or a provider key) from
 *     text before it is stored (run errors, tool output, events), logged or shown;
 *   - `childEnv()` gives child processes (git, `run_command` shells) the user's environment
 *     without the provider secrets: the well-known key variables and any variable whose value
 *     is a remembered secret.
 */

/** Environment variables that hold provider keys (never passed to a child process). */
export const SECRET_ENV_NAMES: readonly string[] = [
  'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENROUTER_API_KEY', 'AZURE_OPENAI_API_KEY',
  'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'MISTRAL_API_KEY', 'GROQ_API_KEY', 'DEEPSEEK_API_KEY', 'XAI_API_KEY', 'VOX_COMPAT_API_KEY',
];
/** Shortest value remembered as a secret (shorter strings would redact ordinary words). */
export const MIN_SECRET_LENGTH = 8;
/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Shapes of credentials even when Vox was not told them: `Bearer <token>`, OpenAI-style `sk-…`
 * and Anthropic-style `sk-ant-…` keys, `x-api-key: …` headers.
 */
const TOKEN_SHAPES: readonly RegExp[] = [
  /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\b(x-api-key["']?\s*[:=]\s*["']?)[A-Za-z0-9._-]{8,}/gi,
];

const remembered = new Set<string>();

/** Remembers a secret value for redaction and environment scrubbing (ignored when too short to be one). */
export function rememberSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) remembered.add(value);
}

/** For tests: forget every remembered secret. */
export function forgetSecrets(): void {
  remembered.clear();
}

/** `text` with every remembered secret and every credential-shaped token replaced by REDACTED. */
export function redact(text: string): string {
  let out = text;
  for (const s of remembered) if (out.includes(s)) out = out.split(s).join(REDACTED);
  for (const re of TOKEN_SHAPES) out = out.replace(re, (_m, prefix?: string) => `${typeof prefix === 'string' ? prefix : ''}${REDACTED}`);
  return out;
}

/** The environment for a child process: `base` (default this process's) without provider secrets, plus `extra`. */
export function childEnv(base: NodeJS.ProcessEnv = process.env, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || SECRET_ENV_NAMES.includes(k) || remembered.has(v)) continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
