/**
 * Unit tests for provider-errors: rate-limit reset parsing (headers and bodies), status mapping,
 * and mapping of real SDK error objects to ProviderError codes.
 */
import { strict as assert } from 'node:assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  codeForStatus,
  parseOpenAIDuration,
  parseRateLimitBody,
  parseRateLimitHeaders,
  toProviderError,
} from '../../src/engine/providers/provider-errors';
import { ProviderError } from '../../src/engine/providers/types';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0); // 2025-01-15T12:00:00Z
const ctx = { provider: 'Test' };

describe('parseOpenAIDuration', () => {
  const cases: Array<[string, number | undefined]> = [
    ['6m0s', 360_000],
    ['1.5s', 1500],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['0s', 0],
    ['2m59.56s', 179_560],
    ['', undefined],
    ['soon', undefined],
    ['5x', undefined],
    ['1s garbage', undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected}`, () => {
      const got = parseOpenAIDuration(input);
      if (expected === undefined) assert.equal(got, undefined);
      else assert.ok(got !== undefined && Math.abs(got - expected) < 1e-6, `got ${got}`);
    });
  }
});

describe('parseRateLimitHeaders', () => {
  it('retry-after in seconds', () => {
    assert.deepEqual(parseRateLimitHeaders({ 'retry-after': '30' }, NOW), { resetAtMs: NOW + 30_000, retryAfterMs: 30_000 });
  });

  it('retry-after with a fraction', () => {
    assert.deepEqual(parseRateLimitHeaders({ 'Retry-After': '0.25' }, NOW), { resetAtMs: NOW + 250, retryAfterMs: 250 });
  });

  it('retry-after as an HTTP date', () => {
    const r = parseRateLimitHeaders({ 'retry-after': 'Wed, 15 Jan 2025 12:01:30 GMT' }, NOW);
    assert.deepEqual(r, { resetAtMs: NOW + 90_000, retryAfterMs: 90_000 });
  });

  it('an HTTP date in the past gives a zero delay', () => {
    const r = parseRateLimitHeaders({ 'retry-after': 'Wed, 15 Jan 2025 11:59:00 GMT' }, NOW);
    assert.deepEqual(r, { resetAtMs: NOW - 60_000, retryAfterMs: 0 });
  });

  it('retry-after-ms wins over retry-after', () => {
    assert.deepEqual(parseRateLimitHeaders({ 'retry-after-ms': '1500', 'retry-after': '60' }, NOW), { resetAtMs: NOW + 1500, retryAfterMs: 1500 });
  });

  it('retry-after wins over reset headers', () => {
    const r = parseRateLimitHeaders({ 'retry-after': '5', 'x-ratelimit-reset-tokens': '6m0s' }, NOW);
    assert.equal(r.retryAfterMs, 5000);
  });

  it('OpenAI reset headers: the exhausted limit decides', () => {
    const r = parseRateLimitHeaders({
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '20ms',
      'x-ratelimit-remaining-tokens': '1000',
      'x-ratelimit-reset-tokens': '6m0s',
    }, NOW);
    assert.deepEqual(r, { resetAtMs: NOW + 20, retryAfterMs: 20 });
  });

  it('OpenAI reset headers: without remaining counts, the latest reset wins', () => {
    const r = parseRateLimitHeaders({ 'x-ratelimit-reset-requests': '1.5s', 'x-ratelimit-reset-tokens': '6m0s' }, NOW);
    assert.equal(r.retryAfterMs, 360_000);
  });

  it('Anthropic RFC 3339 reset headers', () => {
    const r = parseRateLimitHeaders({
      'anthropic-ratelimit-requests-remaining': '10',
      'anthropic-ratelimit-requests-reset': '2025-01-15T12:00:05Z',
      'anthropic-ratelimit-input-tokens-remaining': '0',
      'anthropic-ratelimit-input-tokens-reset': '2025-01-15T12:00:42Z',
    }, NOW);
    assert.deepEqual(r, { resetAtMs: NOW + 42_000, retryAfterMs: 42_000 });
  });

  it('OpenRouter x-ratelimit-reset as Unix milliseconds, and as Unix seconds', () => {
    assert.equal(parseRateLimitHeaders({ 'x-ratelimit-reset': String(NOW + 7000) }, NOW).resetAtMs, NOW + 7000);
    assert.equal(parseRateLimitHeaders({ 'x-ratelimit-reset': String(NOW / 1000 + 9) }, NOW).resetAtMs, NOW + 9000);
  });

  it('works with a fetch Headers object', () => {
    const h = new Headers({ 'Retry-After': '2' });
    assert.equal(parseRateLimitHeaders(h, NOW).resetAtMs, NOW + 2000);
  });

  it('nothing parseable gives an empty result', () => {
    assert.deepEqual(parseRateLimitHeaders({ 'retry-after': 'later', 'x-ratelimit-reset-tokens': 'soon' }, NOW), {});
    assert.deepEqual(parseRateLimitHeaders({}, NOW), {});
  });
});

describe('parseRateLimitBody', () => {
  it('OpenRouter metadata.headers', () => {
    const body = { error: { code: 429, message: 'Rate limit exceeded', metadata: { headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(NOW + 60_000) } } } };
    assert.deepEqual(parseRateLimitBody(body, NOW), { resetAtMs: NOW + 60_000, retryAfterMs: 60_000 });
  });

  it('Google RetryInfo retryDelay', () => {
    const body = { error: { code: 429, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }] } };
    assert.equal(parseRateLimitBody(body, NOW).retryAfterMs, 37_000);
  });

  it('OpenAI "Please try again in …" message', () => {
    const body = { message: 'Rate limit reached for gpt-4o on tokens per min. Please try again in 6m0s. Visit …', code: 'rate_limit_exceeded' };
    assert.equal(parseRateLimitBody(body, NOW).retryAfterMs, 360_000);
  });

  it('no hint gives an empty result', () => {
    assert.deepEqual(parseRateLimitBody({ error: { message: 'You exceeded your current quota' } }, NOW), {});
    assert.deepEqual(parseRateLimitBody('nope', NOW), {});
  });
});

describe('codeForStatus', () => {
  it('maps statuses', () => {
    assert.equal(codeForStatus(401), 'auth');
    assert.equal(codeForStatus(403), 'auth');
    assert.equal(codeForStatus(429), 'rateLimited');
    assert.equal(codeForStatus(400), 'badRequest');
    assert.equal(codeForStatus(404), 'badRequest');
    assert.equal(codeForStatus(422), 'badRequest');
    assert.equal(codeForStatus(500), 'server');
    assert.equal(codeForStatus(529), 'server');
  });
});

describe('toProviderError', () => {
  it('maps a real OpenAI RateLimitError with headers', () => {
    const err = OpenAI.APIError.generate(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, undefined, new Headers({ 'retry-after': '3' }));
    const before = Date.now();
    const pe = toProviderError(err, ctx);
    assert.equal(pe.code, 'rateLimited');
    assert.equal(pe.details.status, 429);
    assert.ok((pe.details.resetAtMs ?? 0) >= before + 3000);
    assert.equal(pe.details.cause, err);
  });

  it('maps a 429 without headers using the body hint', () => {
    const err = OpenAI.APIError.generate(429, { error: { message: 'Please try again in 1.5s.', code: 'rate_limit_exceeded' } }, undefined, new Headers());
    const pe = toProviderError(err, ctx);
    assert.equal(pe.code, 'rateLimited');
    assert.ok(Math.abs((pe.details.retryAfterMs ?? 0) - 1500) < 50);
  });

  it('maps Anthropic auth, bad request and overloaded errors', () => {
    const body = (type: string) => ({ type: 'error', error: { type, message: type } });
    assert.equal(toProviderError(Anthropic.APIError.generate(401, body('authentication_error'), undefined, new Headers()), ctx).code, 'auth');
    assert.equal(toProviderError(Anthropic.APIError.generate(400, body('invalid_request_error'), undefined, new Headers()), ctx).code, 'badRequest');
    assert.equal(toProviderError(Anthropic.APIError.generate(529, body('overloaded_error'), undefined, new Headers()), ctx).code, 'server');
  });

  it('maps connection errors, undici termination, SyntaxError and aborts', () => {
    assert.equal(toProviderError(new OpenAI.APIConnectionError({ message: 'Connection error.' }), ctx).code, 'network');
    const terminated = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    assert.equal(toProviderError(terminated, ctx).code, 'network');
    assert.equal(toProviderError(new SyntaxError('Unexpected token'), ctx).code, 'malformedStream');
    assert.equal(toProviderError(new Anthropic.APIUserAbortError(), ctx).code, 'cancelled');
    const ac = new AbortController();
    ac.abort();
    assert.equal(toProviderError(new TypeError('terminated'), { ...ctx, signal: ac.signal }).code, 'cancelled');
  });

  it('maps mid-stream error events by type', () => {
    const anth = new Anthropic.APIError(undefined, { type: 'error', error: { type: 'rate_limit_error', message: 'x' } }, undefined, undefined);
    assert.equal(toProviderError(anth, ctx).code, 'rateLimited');
    const oai = new OpenAI.APIError(undefined, { message: 'upstream failed', code: 502 }, undefined, undefined);
    const pe = toProviderError(oai, ctx);
    assert.equal(pe.code, 'server');
    assert.equal(pe.details.status, 502);
  });

  it('returns an existing ProviderError unchanged', () => {
    const pe = new ProviderError('auth', 'x');
    assert.equal(toProviderError(pe, ctx), pe);
  });
});
