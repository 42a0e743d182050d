/**
 * Shared failure mapping for the remote providers (OpenAI-compatible and Anthropic): turns SDK
 * errors, HTTP statuses, mid-stream error events, transport failures and aborts into a typed
 * `ProviderError`, and parses rate-limit reset times from response headers and error bodies
 * (`retry-after`, `retry-after-ms`, `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`,
 * OpenRouter's `metadata.headers`, Google's `retryDelay`, OpenAI's "try again in 1.5s").
 * Never puts request headers (which carry API keys) into messages.
 */
import { ProviderError, type ProviderErrorCode } from './types';
import { hostPort, networkCause } from './network-cause';

/** A bare number in a reset header at or above this is a Unix time in milliseconds. */
const EPOCH_MS_THRESHOLD = 1e12;
/** A bare number in a reset header at or above this (and below the ms threshold) is Unix seconds. */
const EPOCH_SECONDS_THRESHOLD = 1e9;
/** Depth limit when walking `error.cause` chains looking for a socket error code. */
const MAX_CAUSE_DEPTH = 5;

/** Anything headers can be read from: a fetch `Headers`, or a plain (case-insensitive) record. */
export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Record<string, string | string[] | number | undefined | null>;

export interface RateLimitReset {
  /** Absolute time (epoch ms) at which the limit resets. */
  resetAtMs?: number;
  /** Delay from `nowMs` until the reset, never negative. */
  retryAfterMs?: number;
}

function headerGetter(headers: HeaderSource): (name: string) => string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const h = headers as { get(name: string): string | null | undefined };
    return (name) => h.get(name) ?? undefined;
  }
  const lower = new Map<string, string>();
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    lower.set(k.toLowerCase(), Array.isArray(v) ? String(v[0]) : String(v));
  }
  return (name) => lower.get(name.toLowerCase());
}

const DURATION_UNITS_MS: Record<string, number> = {
  d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6,
};

/**
 * Parses OpenAI's Go-style duration strings (`6m0s`, `1.5s`, `20ms`, `1h2m3.5s`) into ms.
 * Returns undefined for anything else.
 */
export function parseOpenAIDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '') return undefined;
  const part = /(\d+(?:\.\d+)?|\.\d+)(ms|us|µs|ns|h|m|s|d)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    part.lastIndex = pos;
    const m = part.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * (DURATION_UNITS_MS[m[2] as string] as number);
    pos = part.lastIndex;
  }
  return total;
}

function isPlainNumber(s: string): boolean {
  return /^\d+(?:\.\d+)?$/.test(s.trim());
}

/** `retry-after`: delay in (possibly fractional) seconds, or an HTTP date. Returns epoch ms. */
function parseRetryAfter(value: string, nowMs: number): number | undefined {
  if (isPlainNumber(value)) return nowMs + Number(value) * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * A reset header value: an OpenAI duration, an RFC 3339 / HTTP date, or a bare number (Unix ms,
 * Unix seconds, or a delay in seconds, told apart by magnitude). Returns epoch ms.
 */
function parseResetValue(value: string, nowMs: number): number | undefined {
  const v = value.trim();
  if (isPlainNumber(v)) {
    const n = Number(v);
    if (n >= EPOCH_MS_THRESHOLD) return n;
    if (n >= EPOCH_SECONDS_THRESHOLD) return n * 1000;
    return nowMs + n * 1000;
  }
  const d = parseOpenAIDuration(v);
  if (d !== undefined) return nowMs + d;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** Limit families whose `remaining`/`reset` headers come in pairs. */
const RESET_FAMILIES: ReadonlyArray<{ reset: string; remaining: string }> = [
  { reset: 'x-ratelimit-reset-requests', remaining: 'x-ratelimit-remaining-requests' },
  { reset: 'x-ratelimit-reset-tokens', remaining: 'x-ratelimit-remaining-tokens' },
  { reset: 'anthropic-ratelimit-requests-reset', remaining: 'anthropic-ratelimit-requests-remaining' },
  { reset: 'anthropic-ratelimit-tokens-reset', remaining: 'anthropic-ratelimit-tokens-remaining' },
  { reset: 'anthropic-ratelimit-input-tokens-reset', remaining: 'anthropic-ratelimit-input-tokens-remaining' },
  { reset: 'anthropic-ratelimit-output-tokens-reset', remaining: 'anthropic-ratelimit-output-tokens-remaining' },
  // OpenRouter and several gateways: a single family (reset as Unix ms).
  { reset: 'x-ratelimit-reset', remaining: 'x-ratelimit-remaining' },
];

function finish(resetAtMs: number | undefined, nowMs: number): RateLimitReset {
  if (resetAtMs === undefined || !Number.isFinite(resetAtMs)) return {};
  return { resetAtMs, retryAfterMs: Math.max(0, resetAtMs - nowMs) };
}

/**
 * Reads when a rate limit resets from response headers. Precedence: `retry-after-ms`, then
 * `retry-after`, then the per-limit reset headers. Among those, the limits reported exhausted
 * (`remaining` = 0) decide; if none says so, the latest reset wins (waiting too little only
 * earns another 429).
 */
export function parseRateLimitHeaders(headers: HeaderSource, nowMs: number = Date.now()): RateLimitReset {
  const get = headerGetter(headers);
  const ms = get('retry-after-ms');
  if (ms !== undefined && isPlainNumber(ms)) return finish(nowMs + Number(ms), nowMs);
  const ra = get('retry-after');
  if (ra !== undefined) {
    const t = parseRetryAfter(ra, nowMs);
    if (t !== undefined) return finish(t, nowMs);
  }
  const exhausted: number[] = [];
  const all: number[] = [];
  for (const fam of RESET_FAMILIES) {
    const raw = get(fam.reset);
    if (raw === undefined) continue;
    const t = parseResetValue(raw, nowMs);
    if (t === undefined) continue;
    all.push(t);
    const remaining = get(fam.remaining);
    if (remaining !== undefined && Number(remaining) <= 0) exhausted.push(t);
  }
  const pick = exhausted.length > 0 ? exhausted : all;
  return pick.length > 0 ? finish(Math.max(...pick), nowMs) : {};
}

/**
 * Reads a reset from a provider's JSON error body: OpenRouter's `error.metadata.headers`,
 * Google's `RetryInfo.retryDelay` (`"37s"`), and OpenAI's "Please try again in 1.5s" message.
 */
export function parseRateLimitBody(body: unknown, nowMs: number = Date.now()): RateLimitReset {
  if (!body || typeof body !== 'object') return {};
  const root = body as Record<string, unknown>;
  const err = (root.error && typeof root.error === 'object' ? root.error : root) as Record<string, unknown>;
  const meta = err.metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta.headers === 'object' && meta.headers) {
    const r = parseRateLimitHeaders(meta.headers as HeaderSource, nowMs);
    if (r.resetAtMs !== undefined) return r;
  }
  if (Array.isArray(err.details)) {
    for (const d of err.details) {
      const delay = (d as Record<string, unknown> | null)?.retryDelay;
      if (typeof delay === 'string') {
        const t = parseOpenAIDuration(delay);
        if (t !== undefined) return finish(nowMs + t, nowMs);
      }
    }
  }
  if (typeof err.message === 'string') {
    const m = /try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)/i.exec(err.message);
    const t = m ? parseOpenAIDuration(m[1] as string) : undefined;
    if (t !== undefined) return finish(nowMs + t, nowMs);
  }
  return {};
}

export function cancelledError(cause?: unknown): ProviderError {
  return new ProviderError('cancelled', 'Request cancelled', cause === undefined ? {} : { cause });
}

/** Maps an HTTP status to a code. 408/409 are transient (SDKs retry them), 5xx too. */
export function codeForStatus(status: number): ProviderErrorCode {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rateLimited';
  if (status === 408) return 'network';
  if (status === 409 || status >= 500) return 'server';
  return 'badRequest';
}

/** Error `type`/`code` strings seen in mid-stream error events of both APIs. */
function codeForErrorType(type: string): ProviderErrorCode | undefined {
  switch (type) {
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
    case 'tokens':
    case 'requests':
      return 'rateLimited';
    case 'authentication_error':
    case 'permission_error':
    case 'invalid_api_key':
      return 'auth';
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return 'badRequest';
    case 'overloaded_error':
    case 'api_error':
    case 'server_error':
      return 'server';
    default:
      return undefined;
  }
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN',
  'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED',
]);

function isAbortLike(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const name = (e as { name?: unknown }).name;
  return name === 'AbortError' || (e as { constructor?: { name?: string } }).constructor?.name === 'APIUserAbortError';
}

function isNetworkLike(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; cur && typeof cur === 'object' && depth < MAX_CAUSE_DEPTH; depth++) {
    const o = cur as { code?: unknown; message?: unknown; name?: unknown; constructor?: { name?: string } };
    if (typeof o.code === 'string' && NETWORK_ERROR_CODES.has(o.code)) return true;
    const ctor = o.constructor?.name;
    if (ctor === 'APIConnectionError' || ctor === 'APIConnectionTimeoutError') return true;
    // undici: a body cut short is `TypeError: terminated`; a failed connect is `fetch failed`.
    if (o.name === 'TypeError' && (o.message === 'terminated' || o.message === 'fetch failed')) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/** Duck-typed view of both SDKs' `APIError` (same Stainless shape). */
interface SdkApiErrorLike {
  status: number | undefined;
  headers: { get(name: string): string | null } | undefined;
  error: unknown;
  message: string;
}

function asSdkApiError(e: unknown): SdkApiErrorLike | undefined {
  if (!(e instanceof Error) || !('status' in e) || !('error' in e) || !('headers' in e)) return undefined;
  return e as unknown as SdkApiErrorLike;
}

/** The `type`/`code` of an error body: `{error:{type,code}}` (OpenAI) or `{type:'error',error:{type}}`. */
function errorTypeOf(body: unknown): { type?: string; numericCode?: number } {
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const inner = (b.error && typeof b.error === 'object' ? b.error : b) as Record<string, unknown>;
  const out: { type?: string; numericCode?: number } = {};
  for (const key of ['code', 'type'] as const) {
    const v = inner[key];
    if (typeof v === 'string' && codeForErrorType(v)) return { type: v };
    if (typeof v === 'number') out.numericCode = v;
  }
  if (typeof inner.type === 'string') out.type = inner.type;
  return out;
}

export interface ErrorContext {
  /** Human label used in messages, e.g. `OpenAI-compatible` or `Anthropic`. */
  provider: string;
  signal?: AbortSignal | undefined;
  /** The endpoint the request went to: a transport failure names its host:port and cause. */
  baseUrl?: string | undefined;
}

/** Error codes and message phrases of a quota that will not come back by waiting (billing, credit, a hard cap). */
const QUOTA_CODES = new Set(['insufficient_quota', 'billing_hard_limit_reached', 'billing_not_active', 'access_terminated']);
const QUOTA_PHRASES = /credit balance is too low|exceeded your current quota|billing|purchase more credits|insufficient (?:credits|balance|funds)/i;

/** Whether an error body or message says the account is out of quota (not a rate limit that resets). */
export function isQuotaExhausted(body: unknown, message: string): boolean {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const inner = (b.error && typeof b.error === 'object' ? b.error : b) as Record<string, unknown>;
    for (const k of ['code', 'type']) if (typeof inner[k] === 'string' && QUOTA_CODES.has(inner[k] as string)) return true;
    if (typeof inner.message === 'string' && QUOTA_PHRASES.test(inner.message)) return true;
  }
  return QUOTA_PHRASES.test(message);
}

/** Builds a rate-limit error from whatever headers/body are available (or a quota one, which waiting does not fix). */
function rateLimited(message: string, status: number | undefined, headers: HeaderSource | undefined, body: unknown, cause: unknown): ProviderError {
  if (isQuotaExhausted(body, message)) {
    return new ProviderError('quotaExhausted', `${message} — the account is out of quota or credit; waiting will not help (add credit or choose another model)`, {
      ...(status !== undefined ? { status } : {}), cause,
    });
  }
  const now = Date.now();
  let reset: RateLimitReset = headers ? parseRateLimitHeaders(headers, now) : {};
  if (reset.resetAtMs === undefined) reset = parseRateLimitBody(body, now);
  return new ProviderError('rateLimited', message, { ...(status !== undefined ? { status } : {}), ...reset, cause });
}

/** Maps any failure raised while requesting or consuming a stream to a `ProviderError`. */
export function toProviderError(err: unknown, ctx: ErrorContext): ProviderError {
  if (err instanceof ProviderError) return err;
  if (ctx.signal?.aborted || isAbortLike(err)) return cancelledError(err);

  const api = asSdkApiError(err);
  if (api && typeof api.status === 'number') {
    const status = api.status;
    const code = codeForStatus(status);
    const msg = `${ctx.provider} request failed: ${api.message}`;
    if (code === 'rateLimited') return rateLimited(msg, status, api.headers, api.error, err);
    // Anthropic answers an empty credit balance with 400 (and some gateways with 402): a quota failure too.
    if ((status === 400 || status === 402) && isQuotaExhausted(api.error, api.message)) return rateLimited(msg, status, api.headers, api.error, err);
    return new ProviderError(code, msg, { status, cause: err });
  }
  if (api && api.status === undefined && api.error !== undefined && !isNetworkLike(err)) {
    // An error delivered inside the stream (`event: error` / `data: {"error": …}`).
    const { type, numericCode } = errorTypeOf(api.error);
    const code = (type ? codeForErrorType(type) : undefined) ?? (numericCode !== undefined ? codeForStatus(numericCode) : 'server');
    const msg = `${ctx.provider} stream reported an error: ${api.message}`;
    if (code === 'rateLimited') return rateLimited(msg, numericCode, api.headers, api.error, err);
    return new ProviderError(code, msg, { ...(numericCode !== undefined ? { status: numericCode } : {}), cause: err });
  }
  if (err instanceof SyntaxError) {
    return new ProviderError('malformedStream', `${ctx.provider} sent unparseable stream data: ${err.message}`, { cause: err });
  }
  if (isNetworkLike(err)) {
    const cause = networkCause(err);
    if (ctx.baseUrl && cause) {
      return new ProviderError('network', `${ctx.provider} connection failed: ${hostPort(ctx.baseUrl)} (${ctx.baseUrl}): ${cause.text}`, { cause: err });
    }
    const where = ctx.baseUrl ? ` (${hostPort(ctx.baseUrl)})` : '';
    return new ProviderError('network', `${ctx.provider} connection failed${where}: ${describe(err)}`, { cause: err });
  }
  return new ProviderError('network', `${ctx.provider} request failed unexpectedly: ${describe(err)}`, { cause: err });
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
}
