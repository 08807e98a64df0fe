import { RemoteAuthError } from './errors.js';

/**
 * Every HTTP request of discovery, registration and the token endpoint goes through here, so the
 * rules hold for each URL whoever built it (ours or the MCP SDK's discovery, which takes this as
 * its `fetchFn`): https, or plain http on a loopback host only; no credentials in the URL; a
 * bounded body and time; a redirect followed only within the same origin, at most
 * {@link MAX_REDIRECTS} times (a metadata or token request must not be bounced elsewhere).
 */

export const MAX_RESPONSE_BYTES = 256 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_REDIRECTS = 3;

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** 127.0.0.0/8, ::1 and localhost: the only hosts where plain http is taken. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The URL parsed, or a refusal that names it and says why (insecure, credentials, not a URL). */
export function requireSecureUrl(value: unknown, what: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new RemoteAuthError(
      'OAUTH_BAD_RESPONSE',
      `The ${what} is not a URL (${JSON.stringify(String(value)).slice(0, 200)}).`,
    );
  }
  if (url.username || url.password)
    throw new RemoteAuthError(
      'OAUTH_INSECURE_URL',
      `The ${what} ${url.origin} carries credentials in the URL; ringfence refuses it.`,
    );
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new RemoteAuthError(
    'OAUTH_INSECURE_URL',
    `The ${what} ${url.origin}${url.pathname} is not https; plain http is refused except on a loopback host (127.0.0.1, ::1, localhost). Ask the server's operator for its https address.`,
  );
}

async function readBounded(response: Response, maxBytes: number, url: URL): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new RemoteAuthError(
      'OAUTH_BAD_RESPONSE',
      `${url.origin}${url.pathname} answered more than ${maxBytes} bytes; refused.`,
    );
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new RemoteAuthError(
        'OAUTH_BAD_RESPONSE',
        `${url.origin}${url.pathname} answered more than ${maxBytes} bytes; refused.`,
      );
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

export interface GuardedFetchOptions {
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
  /** The fetch underneath (tests); the global fetch by default. */
  readonly fetch?: FetchLike;
}

/** A fetch that keeps the rules above; the answer's body is already read (bounded). */
export function guardedFetch(options: GuardedFetchOptions = {}): FetchLike {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  const underlying = options.fetch ?? fetch;
  return async (input, init = {}) => {
    let url = requireSecureUrl(input instanceof URL ? input.href : input, 'URL');
    const origin = url.origin;
    const signal = AbortSignal.timeout(timeoutMs);
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await underlying(url, { ...init, redirect: 'manual', signal });
      } catch (error) {
        if (signal.aborted)
          throw new RemoteAuthError(
            'OAUTH_BAD_RESPONSE',
            `${url.origin}${url.pathname} did not answer within ${timeoutMs} ms.`,
          );
        throw new RemoteAuthError(
          'OAUTH_BAD_RESPONSE',
          `${url.origin}${url.pathname} could not be reached (${(error as Error).message}).`,
          { cause: error },
        );
      }
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel().catch(() => {});
        const next = requireSecureUrl(
          new URL(response.headers.get('location')!, url).href,
          'redirect target',
        );
        if (next.origin !== origin)
          throw new RemoteAuthError(
            'OAUTH_BAD_RESPONSE',
            `${url.origin}${url.pathname} redirected to another origin (${next.origin}); ringfence follows redirects within one origin only.`,
          );
        if (hop >= MAX_REDIRECTS || (init.method && init.method !== 'GET'))
          throw new RemoteAuthError(
            'OAUTH_BAD_RESPONSE',
            `${url.origin}${url.pathname} redirected too often (or redirected a POST); refused.`,
          );
        url = next;
        continue;
      }
      let body: Uint8Array;
      try {
        body = await readBounded(response, maxBytes, url);
      } catch (error) {
        if (signal.aborted)
          throw new RemoteAuthError(
            'OAUTH_BAD_RESPONSE',
            `${url.origin}${url.pathname} did not answer within ${timeoutMs} ms.`,
          );
        throw error;
      }
      const nullBody = [204, 205, 304].includes(response.status);
      return new Response(nullBody ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
  };
}

/** The JSON object of an answer, or a refusal naming the URL. */
export async function jsonObject(response: Response, what: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await response.text());
  } catch {
    throw new RemoteAuthError('OAUTH_BAD_RESPONSE', `The ${what} is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RemoteAuthError('OAUTH_BAD_RESPONSE', `The ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}
