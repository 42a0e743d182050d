/**
 * downloadModel against a real node:http server on 127.0.0.1: full download with progress,
 * redirects, resume after a dropped connection (automatic and across calls), HTTP errors,
 * checksum mismatch, non-GGUF payloads and cancellation. Nothing touches the internet.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DownloadError, RECOMMENDED_MODELS, downloadModel } from '../../src/engine/model/download';
import { seededBytes, seededRandom } from '../support/random';

/** Size of the fake model payload. */
const PAYLOAD_BYTES = 1_000_000;
/** Where the "dropping" routes cut the first connection. */
const DROP_AT = 300_000;
/** Delay between chunks on the slow route (so cancellation lands mid-stream). */
const SLOW_CHUNK_DELAY_MS = 20;
const SLOW_CHUNK_BYTES = 16_384;

/** Seed of the fake payload's bytes. */
const PAYLOAD_SEED = 12345;

function makePayload(): Buffer {
  const buf = Buffer.from(seededBytes(seededRandom(PAYLOAD_SEED), PAYLOAD_BYTES));
  buf.write('GGUF', 0, 'ascii');
  return buf;
}

const payload = makePayload();
const payloadSha = createHash('sha256').update(payload).digest('hex');

interface Seen {
  url: string;
  range: string | undefined;
}

describe('model download', function () {
  let server: http.Server;
  let base: string;
  let dir: string;
  let seen: Seen[] = [];
  let dropped = new Set<string>();

  function sendRange(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m) {
      const start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, {
        'Content-Length': body.length - start,
        'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}`,
      });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length });
    res.end(body);
  }

  before(async function () {
    server = http.createServer((req, res) => {
      const url = req.url ?? '/';
      seen.push({ url, range: req.headers.range });
      if (url === '/model.gguf') return sendRange(req, res, payload);
      if (url === '/redirect') {
        res.writeHead(302, { Location: '/model.gguf' }).end();
        return;
      }
      if (url.startsWith('/drop/')) {
        // First request per path: promise the full body, send part of it, then kill the socket.
        if (!dropped.has(url)) {
          dropped.add(url);
          res.writeHead(200, { 'Content-Length': payload.length });
          res.write(payload.subarray(0, DROP_AT), () => setTimeout(() => req.socket.destroy(), 10));
          return;
        }
        return sendRange(req, res, payload);
      }
      if (url === '/slow.gguf') {
        res.writeHead(200, { 'Content-Length': payload.length });
        let offset = 0;
        const timer = setInterval(() => {
          if (res.destroyed || offset >= payload.length) {
            clearInterval(timer);
            if (!res.destroyed) res.end();
            return;
          }
          res.write(payload.subarray(offset, offset + SLOW_CHUNK_BYTES));
          offset += SLOW_CHUNK_BYTES;
        }, SLOW_CHUNK_DELAY_MS);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (url === '/page.html') {
        const html = Buffer.from('<!doctype html><html><body>Sign in to download</body></html>');
        res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': html.length }).end(html);
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-dl-'));
    seen = [];
    dropped = new Set();
  });

  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function expectDownloadError(p: Promise<unknown>, code: DownloadError['code']): Promise<DownloadError> {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof DownloadError, `expected DownloadError, got ${String(e)}`);
      assert.equal(e.code, code, e.message);
      return e;
    }
    assert.fail(`expected DownloadError(${code}) but the download succeeded`);
  }

  it('downloads the whole file with progress and a matching sha256', async function () {
    const dest = path.join(dir, 'sub', 'm.gguf');
    const progress: Array<[number, number | undefined]> = [];
    const r = await downloadModel({
      url: `${base}/model.gguf`,
      destPath: dest,
      expectedSha256: payloadSha,
      onProgress: (received, total) => progress.push([received, total]),
    });
    assert.equal(r.bytes, PAYLOAD_BYTES);
    assert.equal(r.sha256, payloadSha);
    assert.equal(r.resumed, false);
    assert.ok(fs.readFileSync(dest).equals(payload));
    assert.ok(!fs.existsSync(`${dest}.part`));
    assert.ok(progress.length >= 1);
    assert.deepEqual(progress.at(-1), [PAYLOAD_BYTES, PAYLOAD_BYTES]);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]![0] >= progress[i - 1]![0]);
  });

  it('follows redirects', async function () {
    const dest = path.join(dir, 'm.gguf');
    const r = await downloadModel({ url: `${base}/redirect`, destPath: dest });
    assert.equal(r.sha256, payloadSha);
    assert.deepEqual(seen.map((s) => s.url), ['/redirect', '/model.gguf']);
  });

  it('resumes with a Range request after the connection drops', async function () {
    const dest = path.join(dir, 'm.gguf');
    const r = await downloadModel({ url: `${base}/drop/a.gguf`, destPath: dest, expectedSha256: payloadSha });
    assert.equal(r.resumed, true);
    assert.ok(fs.readFileSync(dest).equals(payload));
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.range, undefined);
    const m = /^bytes=(\d+)-$/.exec(seen[1]!.range ?? '');
    assert.ok(m, `second request should ask for a range, got ${seen[1]!.range}`);
    assert.ok(Number(m[1]) > 0 && Number(m[1]) <= DROP_AT);
  });

  it('resumes an existing .part left by an earlier failed call', async function () {
    const dest = path.join(dir, 'm.gguf');
    await expectDownloadError(downloadModel({ url: `${base}/drop/b.gguf`, destPath: dest, retries: 0 }), 'network');
    const partSize = fs.statSync(`${dest}.part`).size;
    assert.ok(partSize > 0 && partSize <= DROP_AT, `part size ${partSize}`);
    assert.ok(!fs.existsSync(dest));
    const r = await downloadModel({ url: `${base}/drop/b.gguf`, destPath: dest, retries: 0 });
    assert.equal(r.resumed, true);
    assert.equal(r.sha256, payloadSha);
    assert.equal(seen.at(-1)!.range, `bytes=${partSize}-`);
  });

  it('finishes a complete .part when the server answers 416', async function () {
    const dest = path.join(dir, 'm.gguf');
    fs.writeFileSync(`${dest}.part`, payload);
    const r = await downloadModel({ url: `${base}/model.gguf`, destPath: dest, expectedSha256: payloadSha });
    assert.equal(r.bytes, PAYLOAD_BYTES);
    assert.ok(fs.readFileSync(dest).equals(payload));
  });

  it('reports HTTP errors with their status', async function () {
    const dest = path.join(dir, 'm.gguf');
    const e = await expectDownloadError(downloadModel({ url: `${base}/missing.gguf`, destPath: dest }), 'httpStatus');
    assert.equal(e.details.status, 404);
    assert.ok(!fs.existsSync(dest));
  });

  it('rejects a checksum mismatch and leaves nothing behind', async function () {
    const dest = path.join(dir, 'm.gguf');
    await expectDownloadError(
      downloadModel({ url: `${base}/model.gguf`, destPath: dest, expectedSha256: '0'.repeat(64) }),
      'checksum',
    );
    assert.ok(!fs.existsSync(dest));
    assert.ok(!fs.existsSync(`${dest}.part`));
  });

  it('rejects a payload that is not GGUF', async function () {
    const dest = path.join(dir, 'm.gguf');
    await expectDownloadError(downloadModel({ url: `${base}/page.html`, destPath: dest }), 'notGguf');
    assert.ok(!fs.existsSync(dest));
    assert.ok(!fs.existsSync(`${dest}.part`));
  });

  it('cancels mid-stream and keeps the .part for resuming', async function () {
    const dest = path.join(dir, 'm.gguf');
    const ac = new AbortController();
    let calls = 0;
    const p = downloadModel({
      url: `${base}/slow.gguf`,
      destPath: dest,
      signal: ac.signal,
      onProgress: () => {
        calls++;
        ac.abort();
      },
    });
    await expectDownloadError(p, 'cancelled');
    assert.ok(calls >= 1);
    assert.ok(!fs.existsSync(dest));
    const part = fs.statSync(`${dest}.part`).size;
    assert.ok(part > 0 && part < PAYLOAD_BYTES, `part size ${part}`);
  });

  it('refuses to start when already cancelled', async function () {
    const ac = new AbortController();
    ac.abort();
    await expectDownloadError(downloadModel({ url: `${base}/model.gguf`, destPath: path.join(dir, 'm.gguf'), signal: ac.signal }), 'cancelled');
    assert.equal(seen.length, 0);
  });

  it('lists recommended models as https GGUF URLs', function () {
    assert.ok(RECOMMENDED_MODELS.length > 0);
    for (const m of RECOMMENDED_MODELS) {
      assert.match(m.url, /^https:\/\/huggingface\.co\/.+\.gguf$/);
      assert.ok(m.approxBytes > 0);
    }
  });
});
