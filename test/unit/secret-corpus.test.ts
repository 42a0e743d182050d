/**
 * The redaction rule set against a corpus: real token formats (generated from a seeded PRNG in
 * each provider's published shape, so no live-looking credential is committed) must be hidden
 * wherever they stand in a line, and look-alikes — hashes, UUIDs, base64 images, placeholders,
 * ordinary code and prose — must come through unchanged.
 */
import { strict as assert } from 'node:assert';
import { redact, REDACTED } from '../../src/engine/platform/secrets';
import { findSecrets, secretRulesSource, shannonEntropy } from '../../src/engine/platform/secret-scan';
import { Rng } from '../support/random';

const rng = new Rng(0x5ec2e7);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function draw(alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[rng.int(alphabet.length)];
  return s;
}
const alnum = (n: number) => draw(ALNUM, n);
const hex = (n: number) => draw('0123456789abcdef', n);
const upper32 = (n: number) => draw('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', n);
const digits = (n: number) => draw('0123456789', n);
const b64 = (n: number) => draw(`${ALNUM}+/`, n);
const b64url = (n: number) => draw(`${ALNUM}-_`, n);
const lower = (n: number) => draw('abcdefghijklmnopqrstuvwxyz', n);

function pem(kind: string): string {
  const body = Array.from({ length: 6 }, () => b64(64)).join('\n');
  return `-----BEGIN ${kind}PRIVATE KEY-----\n${body}\n-----END ${kind}PRIVATE KEY-----`;
}
function jwt(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: digits(10), name: 'Ada Lovelace', iat: 1700000000 })}.${b64url(43)}`;
}

/** [name, the secret, the line it stands in (`$` marks where)]. */
const TOKENS: Array<[string, string, string]> = [
  ['GitHub personal access token', `ghp_${alnum(36)}`, 'git clone https://github.com/x/y # token $'],
  ['GitHub OAuth token', `gho_${alnum(36)}`, 'GITHUB_TOKEN=$'],
  ['GitHub app token', `ghs_${alnum(36)}`, 'Using installation token $ for the run'],
  ['GitHub fine-grained token', `github_pat_${draw(`${ALNUM}_`, 82)}`, 'export GH_TOKEN="$"'],
  ['AWS access key id', `AKIA${upper32(16)}`, 'aws_access_key_id = $'],
  ['AWS secret access key', b64(40), 'aws_secret_access_key = $'],
  ['Slack bot token', `xoxb-${digits(12)}-${digits(13)}-${alnum(24)}`, 'SLACK_BOT_TOKEN=$'],
  ['Slack user token', `xoxp-${digits(12)}-${digits(12)}-${digits(13)}-${hex(32)}`, 'token: $'],
  ['Slack webhook', `https://hooks.slack.com/services/T${upper32(10)}/B${upper32(10)}/${alnum(24)}`, 'curl -X POST $'],
  ['PEM RSA private key', pem('RSA '), '$'],
  ['PEM OpenSSH private key', pem('OPENSSH '), 'cat ~/.ssh/id_ed25519\n$'],
  ['PostgreSQL URL password', `S3cr3t-${alnum(12)}`, 'DATABASE_URL=postgres://app:$@db.internal:5432/app'],
  ['MongoDB URL password', `pw${alnum(14)}`, 'mongodb+srv://admin:$@cluster0.example.net/test'],
  ['MySQL URL password', `${alnum(10)}!x`, 'mysql://root:$@127.0.0.1:3306/shop'],
  ['Google API key', `AIza${b64url(35)}`, 'const key = "$";'],
  ['JWT', jwt(), 'Authorization header was $ (expired)'],
  ['OpenAI project key', `sk-proj-${b64url(48)}`, 'OPENAI_API_KEY=$'],
  ['Anthropic key', `sk-ant-api03-${b64url(93)}AA`, 'x $ y'],
  ['Stripe live secret key', `sk_live_${alnum(24)}`, 'Stripe.apiKey = "$";'],
  ['npm token', `npm_${alnum(36)}`, '//registry.npmjs.org/:_authToken=$'],
  ['GitLab personal access token', `glpat-${b64url(20)}`, 'PRIVATE-TOKEN: $'],
  ['SendGrid key', `SG.${b64url(22)}.${b64url(43)}`, 'sendgrid key $'],
  ['Hugging Face token', `hf_${lower(34)}`, 'huggingface-cli login --token $'],
  ['Bearer token', `${alnum(40)}`, 'Authorization: Bearer $'],
  ['Password in an env file', `Tr0ub4dor&3-${alnum(8)}`, 'DB_PASSWORD=$'],
  ['Shopify access token', `shpat_${hex(32)}`, 'X-Shopify-Access-Token: $'],
  ['PyPI upload token', `pypi-AgEIcHlwaS5vcmc${b64url(60)}`, 'password = $'],
  ['DigitalOcean token', `dop_v1_${hex(64)}`, 'DIGITALOCEAN_TOKEN=$'],
  ['Doppler token', `dp.pt.${alnum(43)}`, 'DOPPLER_TOKEN=$'],
  ['Linear API key', `lin_api_${alnum(40)}`, 'LINEAR_API_KEY=$'],
];

/** Text that looks a little like a secret and is not one: must survive byte for byte. */
const LOOK_ALIKES: Array<[string, string]> = [
  ['git SHA-1', `commit ${hex(40)}`],
  ['git SHA-256', `object ${hex(64)}`],
  ['UUID v4', 'thread 3f1c2b7e-9a4d-4c8e-b1f2-6d7e8f9a0b1c started'],
  ['Vox ids', 'msg:8c0e4c7e-2f0b-4f5c-9b0a-1d2e3f4a5b6c-1 run:2b7f… item:abc'],
  ['checkpoint ref', 'refs/vox/checkpoints/thr_01HZX3/0007'],
  ['base64 PNG data URL', `<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${b64(400)}=">`],
  ['npm integrity', `"integrity": "sha512-${b64(86)}=="`],
  ['lockfile resolved URL', '"resolved": "https://registry.npmjs.org/ws/-/ws-8.18.0.tgz"'],
  ['URL without a password', 'git clone https://user@github.com/org/repo.git'],
  ['local database URL', 'postgres://localhost:5432/dev'],
  ['GitHub Actions placeholder', 'password: ${{ secrets.DB_PASSWORD }}'],
  ['env lookups', 'const token = process.env.GITHUB_TOKEN; api_key = os.environ["API_KEY"]'],
  ['template variable', 'apiKey: "${API_KEY}"'],
  ['code with key names', 'const cacheKey = computeCacheKey(file); map.set(cacheKey, value);'],
  ['prose with Bearer', 'The bearer of this letter is a friend.'],
  ['word with sk-', 'Run the task-list and the disk-usage checks.'],
  ['CSS colours', '.btn { color: #1e90ff; background: #fafafa; border-color: #333 }'],
  ['semver and ranges', '"typescript": "~5.9.3", "svelte": "^5.57.3"'],
  ['hexdump', '00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|'],
  ['markdown table', '| key | value |\n| --- | --- |\n| timeout | 30 |'],
  ['short values', 'password=x token=1 key=a'],
  ['file paths', '/home/ada/projects/vox/src/engine/platform/secret-scan.ts:42:7'],
  ['ULID', 'job 01HZX3K9Q7M2V8N4R6T1W5Y0BC finished'],
  ['AIza in prose', 'The AIza prefix marks Google keys.'],
  ['JSON of similar objects', JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'] })))],
  ['a test asserting a redaction', "assert.equal(redact(x), '[redacted]')"],
  ['example AWS key', 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE'],
];

describe('secrets: the maintained rule set (gitleaks + Vox) on a corpus', () => {
  it('says where its rules come from', () => {
    assert.match(secretRulesSource(), /^gitleaks v\d+\.\d+/);
  });

  it(`hides each of ${TOKENS.length} token formats wherever it stands, keeping the rest of the line`, () => {
    assert.ok(TOKENS.length >= 25);
    const missed: string[] = [];
    for (const [name, secret, line] of TOKENS) {
      const text = line.replace('$', secret);
      const out = redact(text);
      if (out.includes(secret) || !out.includes(REDACTED)) missed.push(`${name}: ${out.slice(0, 160)}`);
      // What surrounds the secret is kept (the line's words are still there).
      const words = (line.split('$')[0] ?? '').match(/[A-Za-z]{4,}/g) ?? [];
      for (const w of words.slice(0, 2)) if (!out.includes(w)) missed.push(`${name}: lost the surrounding word ${w}: ${out}`);
    }
    assert.deepEqual(missed, []);
  });

  it(`lets ${LOOK_ALIKES.length} look-alikes through unchanged (hashes, UUIDs, base64 images, placeholders, code, prose)`, () => {
    assert.ok(LOOK_ALIKES.length >= 25);
    const hit = LOOK_ALIKES.filter(([, text]) => redact(text) !== text).map(([name, text]) => `${name}: ${JSON.stringify(findSecrets(text))}`);
    assert.deepEqual(hit, []);
  });

  it('hides every secret of a text holding many, and a secret repeated thousands of times', () => {
    const secrets = TOKENS.map(([, s]) => s);
    const text = TOKENS.map(([, s, line]) => line.replace('$', s)).join('\n');
    const out = redact(text);
    for (const s of secrets) assert.ok(!out.includes(s), `left: ${s}`);
    const tok = `ghp_${alnum(36)}`;
    const many = Array.from({ length: 3000 }, () => `token ${tok}`).join('\n');
    assert.ok(!redact(many).includes(tok));
  });

  it('bad input: empty, short, binary-looking and huge text', () => {
    assert.equal(redact(''), '');
    assert.equal(redact('ghp_'), 'ghp_');
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256)).toString('latin1');
    assert.equal(redact(binary), binary);
    const big = `${'lorem ipsum dolor sit amet, key = value; '.repeat(50_000)}ghp_${alnum(36)}`;
    const out = redact(big);
    assert.ok(out.endsWith(REDACTED));
  });

  it('entropy is measured in bits per character', () => {
    assert.equal(shannonEntropy('aaaa'), 0);
    assert.equal(shannonEntropy('abcd'), 2);
  });
});
