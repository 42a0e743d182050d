/**
 * The OAuth redirect target of a sign-in: an HTTP listener on 127.0.0.1 (RFC 8252 §7.3, a
 * loopback redirect) that receives `GET /callback?code=…&state=…`, accepts it only with the state
 * this sign-in issued (compared in constant time; anything else is answered 400 and ignored, so a
 * stray or forged request cannot end the sign-in), answers a small "you can close this tab" page
 * and hands the code to whoever waits for it. An authorization server's `?error=…` with the right
 * state ends the wait with `mcp/authFailed`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { quote } from '../../../protocol/wire/quote';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { McpError } from './errors';

/** Path of the redirect URI on the loopback listener. */
export const CALLBACK_PATH = '/callback';
/** Longest a sign-in waits for the browser to come back (also bounded by the caller's signal). */
export const OAUTH_CALLBACK_TIMEOUT_MS = 5 * 60_000;
/** Characters of an authorization server's `error` / `error_description` quoted in the failure. */
const ERROR_TEXT_CHARS = 200;

export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback`. */
  readonly redirectUrl: string;
  readonly port: number;
  /** Arms the listener for one sign-in with the state sent in the authorization request (a new state replaces the old). */
  expect(state: string): void;
  /** The code of the armed sign-in (also one that arrived before the call); rejects with `mcp/authFailed` on abort, timeout, close or a refusal. */
  waitForCode(signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

type Outcome = { code: string } | { error: McpError };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`
    + `<body style="font-family:system-ui,sans-serif;margin:3em"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}

function sameState(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

function cut(s: string): string {
  return quote(s, ERROR_TEXT_CHARS);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Starts the listener for the sign-in to `serverName` (named on the page), on `preferredPort`
 * when it is free (the port registered with the authorization server last time), else on a
 * random port.
 */
export async function startLoopbackCallback(serverName: string, preferredPort?: number): Promise<LoopbackCallback> {
  let expected: string | null = null;
  let outcome: Outcome | null = null;
  const waiters = new Set<(o: Outcome) => void>();
  let closed = false;

  const settle = (o: Outcome) => {
    expected = null;
    if (waiters.size === 0) {
      outcome = o;
      return;
    }
    for (const w of [...waiters]) w(o);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return page(res, 404, 'Not found', 'This address only receives Vox\'s sign-in.');
    const state = url.searchParams.get('state');
    if (expected === null) return page(res, 400, 'No sign-in in progress', `Vox is not waiting for a sign-in to ${serverName}. Start it again from Vox.`);
    if (state === null || !sameState(state, expected)) return page(res, 400, 'Sign-in refused', 'This response does not belong to the sign-in Vox started (the state does not match). Start it again from Vox.');
    const error = url.searchParams.get('error');
    if (error !== null) {
      const detail = url.searchParams.get('error_description');
      page(res, 400, 'Sign-in failed', `${serverName} did not authorise Vox: ${cut(error)}. You can close this tab.`);
      return settle({ error: new McpError('authFailed', `Sign-in to ${serverName} was refused by its authorization server: ${cut(error)}${detail ? ` (${cut(detail)})` : ''}.`) });
    }
    const code = url.searchParams.get('code');
    if (!code) return page(res, 400, 'Sign-in failed', 'The response carries no authorization code. Start the sign-in again from Vox.');
    page(res, 200, 'Signed in', `Vox is signed in to ${serverName}. You can close this tab and return to your editor.`);
    settle({ code });
  };

  const server = createServer(onRequest);
  let port: number;
  try {
    port = await listen(server, preferredPort ?? 0);
  } catch (e) {
    if (preferredPort === undefined) throw new McpError('authFailed', `Could not open the sign-in listener on 127.0.0.1: ${(e as Error).message}`);
    port = await listen(server, 0).catch((e2: Error) => {
      throw new McpError('authFailed', `Could not open the sign-in listener on 127.0.0.1: ${e2.message}`);
    });
  }

  return {
    redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    port,
    expect(state) {
      expected = state;
      outcome = null;
    },
    waitForCode(signal) {
      if (closed) return Promise.reject(new McpError('authFailed', `The sign-in to ${serverName} was closed.`));
      if (outcome) {
        const o = outcome;
        outcome = null;
        return 'code' in o ? Promise.resolve(o.code) : Promise.reject(o.error);
      }
      return new Promise<string>((resolve, reject) => {
        const finish = (o: Outcome) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waiters.delete(finish);
          if ('code' in o) resolve(o.code);
          else reject(o.error);
        };
        const onAbort = () => finish({ error: new McpError('authFailed', `The sign-in to ${serverName} was not completed: ${signal.reason instanceof Error && signal.reason.name === 'TimeoutError' ? 'it timed out' : 'it was cancelled'}.`) });
        const timer = setTimeout(() => finish({ error: new McpError('authFailed', `The sign-in to ${serverName} was not completed within ${OAUTH_CALLBACK_TIMEOUT_MS / 60_000} minutes.`) }), OAUTH_CALLBACK_TIMEOUT_MS);
        timer.unref?.();
        waiters.add(finish);
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const w of [...waiters]) w({ error: new McpError('authFailed', `The sign-in to ${serverName} was closed.`) });
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
