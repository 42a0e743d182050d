/** Redaction and child environments (src/engine/platform/secrets.ts). */
import { strict as assert } from 'node:assert';
import { childEnv, forgetSecrets, redact, rememberSecret, REDACTED } from '../../src/engine/platform/secrets';

describe('secrets: redaction and child environments', () => {
  afterEach(() => forgetSecrets());

  it('redacts remembered secrets wherever they appear, and credential-shaped tokens even when not told', () => {
    rememberSecret('my-own-gateway-token-123');
    assert.equal(redact('key my-own-gateway-token-123 rejected (my-own-gateway-token-123)'), `key ${REDACTED} rejected (${REDACTED})`);
    assert.equal(redact('Authorization: Bearer abcdefghijklmnop.qrs'), `Authorization: Bearer ${REDACTED}`);
    assert.equal(redact('sk-proj-AbCdEfGhIjKlMnOpQrSt and sk-ant-api03-0123456789abcdefXYZ'), `${REDACTED} and ${REDACTED}`);
    assert.equal(redact('{"x-api-key": "abcdef123456"}'), `{"x-api-key": "${REDACTED}"}`);
    assert.equal(redact('ordinary text, short sk-12 and a skill'), 'ordinary text, short sk-12 and a skill');
  });

  it('ignores values too short to be secrets (they would redact ordinary words)', () => {
    rememberSecret('abc');
    assert.equal(redact('abc abc'), 'abc abc');
  });

  it('child environments keep the user\'s variables but no provider key, by name or by value', () => {
    rememberSecret('value-of-some-gateway-key');
    const env = childEnv({ PATH: '/bin', HOME: '/h', OPENAI_API_KEY: 'sk-x-1234567890', ANTHROPIC_API_KEY: 'a', OPENROUTER_API_KEY: 'or', VOX_COMPAT_API_KEY: 'c', MY_GATEWAY: 'value-of-some-gateway-key' }, { EXTRA: '1', HOME: undefined });
    assert.deepEqual(env, { PATH: '/bin', EXTRA: '1' });
  });
});
