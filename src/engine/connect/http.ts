/**
 * One HTTP request of the connection checks, with its failure turned into a `ConnectError` that
 * names the provider, `host:port` and the exact cause: the name does not resolve, the connection
 * was refused, no answer within the time limit, the key was rejected (401/403), the model does
 * not exist (404, or a 400 saying so), any other status with the provider's own message. The key
 * travels only in request headers, which no message ever quotes; provider messages are redacted.
 */
import { redact } from '../platform/secrets';
import { quote } from '../../protocol/wire/quote';
import { networkCause } from '../providers/network-cause';
import type { Endpoint } from './endpoints';
import { ConnectError } from './errors';

/** Most bytes of a response body read (OpenRouter's model list is about 1-2 MB). */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Most characters of a provider's error message quoted. */
const MAX_PROVIDER_MESSAGE_CHARS = 300;
/** A 400 whose message says this is a missing model, not a malformed request. */
const MODEL_MISSING_PHRASE = /model[^.]{0,80}(not found|does not exist|not exist|unknown|no such|not available|is not loaded)|no model|unknown model|invalid model/i;

export interface HttpAnswer {
  status: number;
  text: string;
}

export interface RequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  /** What was being done, for messages: "listing models", "the connection test". */
  purpose: string;
  /** The model of a connection test: a 404 then means that model is missing. */
  model?: string;
}

/** The provider's own words from an error body (`error.message`, Ollama's `error`, `message`, `detail`), else the text. */
export function providerMessage(text: string): string {
  let msg = text;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const err = body.error;
    const pick = (v: unknown) => (typeof v === 'string' && v.trim() ? v : undefined);
    msg = pick((err as Record<string, unknown> | undefined)?.message) ?? pick(err) ?? pick(body.message) ?? pick(body.detail) ?? text;
  } catch {
    // not JSON: the text itself
  }
  const flat = redact(msg.replace(/\s+/g, ' ').trim());
  return quote(flat, MAX_PROVIDER_MESSAGE_CHARS) || '(no message)';
}

async function readBounded(res: Response, signal: AbortSignal): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Sends one request; answers its status and body when the server answered 2xx, else throws a ConnectError. */
export async function request(ep: Endpoint, opts: RequestOptions): Promise<HttpAnswer> {
  const { provider, endpoint } = ep;
  const who = `${provider.label} at ${endpoint}`;
  const details = { provider: provider.id, endpoint };
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error('timeout'));
  }, opts.timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(opts.url, {
      method: opts.method,
      headers: opts.headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: ac.signal,
      redirect: 'follow',
    });
    text = await readBounded(res, ac.signal);
  } catch (e) {
    if (timedOut) {
      throw new ConnectError('timeout', `${who} did not answer within ${opts.timeoutMs / 1000} s (${opts.purpose}, ${opts.method} ${opts.url}).`, { ...details, cause: e });
    }
    const cause = networkCause(e);
    const host = endpoint.replace(/:\d+$/, '');
    if (cause?.kind === 'dns') {
      throw new ConnectError('dnsFailed', `Cannot reach ${provider.label}: the host name "${host}" does not resolve (${cause.code}); check the base URL ${ep.baseUrl}.`, { ...details, cause: e });
    }
    if (cause?.kind === 'refused') {
      throw new ConnectError('refused', `${who} refused the connection (${cause.code}): nothing listens there; ${provider.hint}.`, { ...details, cause: e });
    }
    if (cause?.kind === 'timeout') {
      throw new ConnectError('timeout', `${who}: ${cause.text} (${opts.purpose}).`, { ...details, cause: e });
    }
    const why = cause?.text ?? (e instanceof Error ? e.message : String(e));
    throw new ConnectError('network', `${who} could not be reached (${opts.purpose}): ${redact(why)}.`, { ...details, cause: e });
  } finally {
    clearTimeout(timer);
  }
  const status = res.status;
  if (status >= 200 && status < 300) return { status, text };
  const msg = providerMessage(text);
  const withStatus = { ...details, status };
  if (status === 401 || status === 403) {
    throw new ConnectError('unauthorized', `${who} rejected the ${ep.apiKey ? 'API key' : 'request (no API key was sent)'} (HTTP ${status}): ${msg}`, withStatus);
  }
  if (opts.model !== undefined && (status === 404 || (status === 400 && MODEL_MISSING_PHRASE.test(msg)))) {
    throw new ConnectError('modelNotFound', `${who} has no model "${opts.model}" (HTTP ${status}): ${msg}`, withStatus);
  }
  if (status === 404) {
    throw new ConnectError('httpStatus', `${who} has no ${opts.method} ${new URL(opts.url).pathname} (HTTP 404) — is ${ep.baseUrl} the right base URL? ${msg}`, withStatus);
  }
  throw new ConnectError('httpStatus', `${who} answered HTTP ${status} (${opts.purpose}): ${msg}`, withStatus);
}
