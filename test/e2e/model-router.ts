/**
 * An OpenAI-compatible endpoint on 127.0.0.1 in front of one scripted fake server
 * (test/support/fake-openai-server.ts) per model: each request goes to the fake server of the
 * model its JSON body names. Used by test/e2e/ui-variants.ts, whose variants' turns run at the
 * same time.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeServer } from '../support/fake-openai-server';

export interface ModelRouter {
  /** Hand this to `vox.openaiBaseUrl` (ends in `/v1`). */
  baseUrl: string;
  /** Requests that named no known model (answered 404). */
  unrouted: string[];
  close(): Promise<void>;
}

/**
 * Forwards each request to the fake server of the model its JSON body names. The variants' turns
 * run concurrently, so one shared script queue would hand out answers in a racy order; per model
 * queues make "variant #i writes text i" deterministic.
 */
export async function startModelRouter(backends: Record<string, FakeServer>): Promise<ModelRouter> {
  const unrouted: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let model: unknown;
      try {
        model = (JSON.parse(body.toString('utf8')) as { model?: unknown }).model;
      } catch {
        model = undefined;
      }
      const backend = typeof model === 'string' ? backends[model] : undefined;
      if (!backend) {
        unrouted.push(`${req.method} ${req.url} model=${String(model)}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: `router: no fake server for model ${String(model)}`, type: 'invalid_request_error', param: null, code: 'model_not_found' } }));
      }
      const target = new URL(backend.baseUrl);
      const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`router: ${e.message}`);
      });
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    unrouted,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
