/**
 * Why a request never got an HTTP answer, in words a user can act on: the host:port it went to
 * and the socket-level cause (DNS, refused, timed out, reset, unreachable) read from the
 * `error.cause` chain that undici and the SDKs build. Shared by the streaming providers (so a
 * failed Ollama call names Ollama, its URL and the cause) and the connection checks of
 * ../connect/. Never reads request headers, so no key can end up in the text.
 */

/** Depth limit when walking `error.cause` chains. */
const MAX_CAUSE_DEPTH = 6;

export type NetworkCauseKind = 'dns' | 'refused' | 'timeout' | 'reset' | 'unreachable' | 'tls' | 'other';

export interface NetworkCause {
  kind: NetworkCauseKind;
  /** The socket error code when there is one (`ENOTFOUND`, `ECONNREFUSED`, …). */
  code?: string;
  /** A short phrase: "the name does not resolve (ENOTFOUND)". */
  text: string;
}

const KIND_OF_CODE: Record<string, NetworkCauseKind> = {
  ENOTFOUND: 'dns', EAI_AGAIN: 'dns', EAI_NONAME: 'dns', EAI_FAIL: 'dns',
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout', UND_ERR_CONNECT_TIMEOUT: 'timeout', UND_ERR_HEADERS_TIMEOUT: 'timeout', UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNRESET: 'reset', EPIPE: 'reset', UND_ERR_SOCKET: 'reset', UND_ERR_CLOSED: 'reset', ECONNABORTED: 'reset',
  ENETUNREACH: 'unreachable', EHOSTUNREACH: 'unreachable', EADDRNOTAVAIL: 'unreachable',
  CERT_HAS_EXPIRED: 'tls', DEPTH_ZERO_SELF_SIGNED_CERT: 'tls', SELF_SIGNED_CERT_IN_CHAIN: 'tls', UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls', ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
};

const TEXT_OF_KIND: Record<NetworkCauseKind, string> = {
  dns: 'the host name does not resolve',
  refused: 'the connection was refused (nothing listens on that port)',
  timeout: 'the connection timed out',
  reset: 'the connection was closed by the other side',
  unreachable: 'the network or host is unreachable',
  tls: 'the TLS certificate was not accepted',
  other: 'the request failed before any answer',
};

/** Reads the socket-level cause of a failed request (undefined when the chain names none). */
export function networkCause(err: unknown): NetworkCause | undefined {
  let cur: unknown = err;
  for (let depth = 0; cur && typeof cur === 'object' && depth < MAX_CAUSE_DEPTH; depth++) {
    const o = cur as { code?: unknown; name?: unknown; errors?: unknown; cause?: unknown };
    if (typeof o.code === 'string' && KIND_OF_CODE[o.code]) {
      const kind = KIND_OF_CODE[o.code]!;
      return { kind, code: o.code, text: `${TEXT_OF_KIND[kind]} (${o.code})` };
    }
    if (o.name === 'TimeoutError') return { kind: 'timeout', text: TEXT_OF_KIND.timeout };
    // Happy-eyeballs connects fail with an AggregateError of one error per address.
    if (Array.isArray(o.errors) && o.errors.length > 0) {
      const inner = networkCause(o.errors[0]);
      if (inner) return inner;
    }
    cur = o.cause;
  }
  return undefined;
}

/** `host:port` of a URL (the scheme's default port when none is written); the text itself when it is not a URL. */
export function hostPort(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return port ? `${u.hostname}:${port}` : u.hostname;
  } catch {
    return url;
  }
}
