/**
 * Downloads a GGUF model over http(s) for the local provider: streams to `<dest>.part`, reports
 * progress, resumes an existing `.part` with a Range request (and retries dropped connections
 * the same way), rejects non-GGUF payloads early, verifies size and an optional sha256, then
 * renames into place atomically. Also lists the models Vox recommends for offline use.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';

export interface RecommendedModel {
  name: string;
  url: string;
  /** Approximate download size in bytes (for the UI; the server's Content-Length is authoritative). */
  approxBytes: number;
  description: string;
}

/** Small instruct models that run on a laptop CPU (Q4_K_M GGUF, from the Qwen organisation on Hugging Face). */
export const RECOMMENDED_MODELS: readonly RecommendedModel[] = [
  {
    name: 'Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
    approxBytes: 491_000_000,
    description: 'Smallest useful coding model; fast on two CPU cores, weak at multi-step tool use.',
  },
  {
    name: 'Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
    approxBytes: 1_100_000_000,
    description: 'Noticeably better answers; roughly a third of the 0.5B speed on CPU.',
  },
];

export type DownloadErrorCode = ErrorCode<'download'>;

export class DownloadError extends VoxError<'download'> {
  override readonly name = 'DownloadError';
  readonly domain = 'download' as const;
  constructor(
    code: DownloadErrorCode,
    message: string,
    readonly details: { status?: number; cause?: unknown } = {},
  ) {
    super(code, message, { cause: details.cause });
  }
}

export interface DownloadOptions {
  url: string;
  destPath: string;
  /** Called as bytes arrive (throttled); `total` is undefined when the server does not say. */
  onProgress?: (received: number, total: number | undefined) => void;
  signal?: AbortSignal;
  /** Lower-case hex sha256 of the complete file; checked before the file is renamed into place. */
  expectedSha256?: string;
  /** Extra attempts after a dropped connection, each resuming from the `.part` file. */
  retries?: number;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  sha256: string;
  /** True when any bytes came from an earlier `.part` or a retried connection. */
  resumed: boolean;
}

/** Default extra attempts after a dropped connection. */
const DEFAULT_RETRIES = 3;
/** Redirects followed per attempt (Hugging Face redirects once to its CDN). */
const MAX_REDIRECTS = 5;
/** A connection with no data for this long counts as dropped. */
const IDLE_TIMEOUT_MS = 30_000;
/** Minimum interval between progress callbacks (the final one is always delivered). */
const PROGRESS_INTERVAL_MS = 100;
/** Every GGUF file starts with these four bytes. */
const GGUF_MAGIC = Buffer.from('GGUF', 'ascii');
const USER_AGENT = 'vox-model-download/1';

export async function downloadModel(opts: DownloadOptions): Promise<DownloadResult> {
  const partPath = `${opts.destPath}.part`;
  await fs.mkdir(path.dirname(opts.destPath), { recursive: true });
  const retries = opts.retries ?? DEFAULT_RETRIES;
  let resumed = false;
  for (let attempt = 0; ; attempt++) {
    throwIfCancelled(opts.signal);
    const startAt = await fileSize(partPath);
    if (startAt > 0) resumed = true;
    try {
      const total = await fetchToPart(opts, partPath, startAt);
      return await finish(opts, partPath, total, resumed);
    } catch (e) {
      const retryable = e instanceof DownloadError && e.code === 'network' && attempt < retries;
      if (!retryable) throw e;
    }
  }
}

/** One HTTP attempt: appends to (or restarts) the `.part` file. Returns the expected total size. */
async function fetchToPart(opts: DownloadOptions, partPath: string, startAt: number): Promise<number | undefined> {
  const res = await request(opts.url, startAt > 0 ? { Range: `bytes=${startAt}-` } : {}, opts.signal);
  const status = res.statusCode ?? 0;
  if (status === 416 && startAt > 0) {
    res.resume();
    // The .part may already be complete (e.g. we died between download and rename).
    const total = parseContentRangeTotal(res.headers['content-range']);
    if (total === startAt) return total;
    await fs.rm(partPath, { force: true });
    throw new DownloadError('network', `Server rejected resuming ${opts.url} at byte ${startAt}; restarting.`);
  }
  if (status !== 200 && status !== 206) {
    res.resume();
    throw new DownloadError('httpStatus', `Download of ${opts.url} failed: HTTP ${status}.`, { status });
  }
  let offset = 0;
  let total: number | undefined;
  if (status === 206) {
    const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
    if (!range || Number(range[1]) !== startAt) {
      res.resume();
      await fs.rm(partPath, { force: true });
      throw new DownloadError('network', `Server sent an unexpected range for ${opts.url}; restarting.`);
    }
    offset = startAt;
    total = range[2] === '*' ? undefined : Number(range[2]);
  } else {
    const length = Number(res.headers['content-length']);
    total = Number.isFinite(length) && res.headers['content-length'] !== undefined ? length : undefined;
  }
  await streamBody(res, partPath, offset, total, opts);
  return total;
}

/** Pipes a response body into the `.part` file, enforcing the GGUF magic and cancellation. */
function streamBody(
  res: http.IncomingMessage,
  partPath: string,
  offset: number,
  total: number | undefined,
  opts: DownloadOptions,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const out = createWriteStream(partPath, offset > 0 ? { flags: 'a' } : { flags: 'w' });
    let received = offset;
    let head = Buffer.alloc(0);
    let lastProgress = 0;
    let settled = false;
    const fail = (err: DownloadError): void => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      res.destroy();
      out.end(); // flush what already arrived so a resume starts after it
      // Wait for the file handle to close so callers can delete or reopen the .part safely. A
      // cancelled or dropped download keeps its .part for resuming; a wrong payload does not.
      out.once('close', () => {
        if (err.code === 'notGguf') fs.rm(partPath, { force: true }).then(() => reject(err), () => reject(err));
        else reject(err);
      });
    };
    const onAbort = (): void => fail(cancelledError());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    res.setTimeout(IDLE_TIMEOUT_MS, () => fail(new DownloadError('network', `Download of ${opts.url} stalled.`)));
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (offset === 0 && head.length < GGUF_MAGIC.length) {
        head = Buffer.concat([head, chunk]).subarray(0, GGUF_MAGIC.length);
        if (!GGUF_MAGIC.subarray(0, head.length).equals(head)) {
          fail(new DownloadError('notGguf', `${opts.url} is not a GGUF file (it starts with ${JSON.stringify(head.toString('latin1'))}).`));
          return;
        }
      }
      received += chunk.length;
      if (!out.write(chunk)) {
        res.pause();
        out.once('drain', () => res.resume());
      }
      const now = Date.now();
      if (now - lastProgress >= PROGRESS_INTERVAL_MS) {
        lastProgress = now;
        opts.onProgress?.(received, total);
      }
    });
    res.on('aborted', () => fail(new DownloadError('network', `Connection dropped while downloading ${opts.url}.`)));
    res.on('error', (cause) => fail(new DownloadError('network', `Connection error while downloading ${opts.url}: ${cause.message}`, { cause })));
    out.on('error', (cause) => fail(new DownloadError('network', `Cannot write ${partPath}: ${cause.message}`, { cause })));
    res.on('end', () => {
      if (settled) return;
      out.end(() => {
        if (settled) return;
        settled = true;
        opts.signal?.removeEventListener('abort', onAbort);
        opts.onProgress?.(received, total);
        if (total !== undefined && received !== total) {
          reject(new DownloadError('network', `Download of ${opts.url} ended at ${received} of ${total} bytes.`));
        } else {
          resolve();
        }
      });
    });
  });
}

/** Verifies the finished `.part` (size, magic, checksum) and renames it into place. */
async function finish(opts: DownloadOptions, partPath: string, total: number | undefined, resumed: boolean): Promise<DownloadResult> {
  const bytes = await fileSize(partPath);
  if (total !== undefined && bytes !== total) {
    throw new DownloadError('network', `Downloaded ${bytes} bytes of ${opts.url}, expected ${total}.`);
  }
  const handle = await fs.open(partPath, 'r');
  const head = Buffer.alloc(GGUF_MAGIC.length);
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (!head.equals(GGUF_MAGIC)) {
    await fs.rm(partPath, { force: true });
    throw new DownloadError('notGguf', `${opts.url} is not a GGUF file.`);
  }
  const sha256 = await hashFile(partPath, opts.signal);
  if (opts.expectedSha256 && sha256 !== opts.expectedSha256.toLowerCase()) {
    await fs.rm(partPath, { force: true });
    throw new DownloadError('checksum', `Checksum mismatch for ${opts.url}: expected ${opts.expectedSha256}, got ${sha256}.`);
  }
  await fs.rename(partPath, opts.destPath);
  return { path: opts.destPath, bytes, sha256, resumed };
}

/** GET with redirects; resolves with the final response (body unread). */
function request(url: string, headers: Record<string, string>, signal: AbortSignal | undefined, redirects = 0): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (cause) {
      reject(new DownloadError('network', `Invalid download URL: ${url}`, { cause }));
      return;
    }
    const client = parsed.protocol === 'https:' ? https : parsed.protocol === 'http:' ? http : undefined;
    if (!client) {
      reject(new DownloadError('network', `Unsupported URL scheme in ${url} (use http or https).`));
      return;
    }
    const req = client.get(parsed, { headers: { 'User-Agent': USER_AGENT, ...headers } });
    const onAbort = (): void => {
      req.destroy();
      reject(cancelledError());
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error('connection timed out')));
    req.on('error', (cause) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new DownloadError('network', `Cannot reach ${parsed.host}: ${cause.message}`, { cause }));
    });
    req.on('response', (res) => {
      signal?.removeEventListener('abort', onAbort);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location) {
        res.resume();
        if (redirects >= MAX_REDIRECTS) {
          reject(new DownloadError('httpStatus', `Too many redirects downloading ${url}.`, { status }));
          return;
        }
        resolve(request(new URL(location, parsed).toString(), headers, signal, redirects + 1));
        return;
      }
      resolve(res);
    });
  });
}

function parseContentRangeTotal(header: string | undefined): number | undefined {
  const m = /\/(\d+)$/.exec(header ?? '');
  return m ? Number(m[1]) : undefined;
}

async function fileSize(p: string): Promise<number> {
  try {
    return (await fs.stat(p)).size;
  } catch {
    return 0;
  }
}

function hashFile(p: string, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(p);
    const onAbort = (): void => {
      stream.destroy();
      reject(cancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', (cause) => reject(new DownloadError('network', `Cannot read ${p}: ${cause.message}`, { cause })));
    stream.on('end', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(hash.digest('hex'));
    });
  });
}

function cancelledError(): DownloadError {
  return new DownloadError('cancelled', 'Download cancelled.');
}

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledError();
}
