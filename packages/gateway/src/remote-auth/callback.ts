import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RemoteAuthError } from './errors.js';
import { CALLBACK_PATH } from './registration.js';

/**
 * The loopback redirect listener of a login (RFC 8252 §7.3): 127.0.0.1 only, an ephemeral port
 * (or the port of the client's registered redirect URI when it is free), one path. It answers
 * the browser once and settles with the authorization response's parameters; the checks of
 * `state`, `iss` and `error` are the login's ({@link checkAuthorizationResponse}).
 */

export interface CallbackListener {
  readonly redirectUri: string;
  /** The query of the first request that is an authorization response (right path or not). */
  readonly response: Promise<{ path: string; params: URLSearchParams }>;
  close(): Promise<void>;
}

const page = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

const looksLikeResponse = (params: URLSearchParams) =>
  params.has('code') || params.has('error') || params.has('state');

export async function listenForCallback(port = 0): Promise<CallbackListener> {
  let settle!: (value: { path: string; params: URLSearchParams }) => void;
  const response = new Promise<{ path: string; params: URLSearchParams }>((resolve) => {
    settle = resolve;
  });
  let answered = false;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (
      req.method !== 'GET' ||
      answered ||
      (url.pathname !== CALLBACK_PATH && !looksLikeResponse(url.searchParams))
    ) {
      res
        .writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
        .end(page('Not here', 'Nothing here.'));
      return;
    }
    answered = true;
    const ok =
      url.pathname === CALLBACK_PATH && url.searchParams.has('code') && !url.searchParams.has('error');
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'close',
      })
      .end(
        ok
          ? page(
              'ringfence',
              'ringfence received the answer. You can close this tab and return to the terminal.',
            )
          : page('ringfence', 'ringfence did not accept this answer; the terminal says why.'),
      );
    settle({ path: url.pathname, params: url.searchParams });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${bound}${CALLBACK_PATH}`,
    response,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Listens on the port of `redirectUri` when it is a free loopback port, else on an ephemeral one. */
export async function listenPreferring(redirectUri: string | undefined): Promise<CallbackListener> {
  if (redirectUri) {
    try {
      const url = new URL(redirectUri);
      if (url.hostname === '127.0.0.1' && url.pathname === CALLBACK_PATH && url.port)
        return await listenForCallback(Number(url.port));
    } catch {}
  }
  return listenForCallback(0);
}

export interface ExpectedResponse {
  readonly state: string;
  readonly issuer: string;
  /** RFC 9207: the AS says it sends `iss`, so an answer without it is refused. */
  readonly issRequired: boolean;
}

/** The authorization code of a response that passes every check, or the refusal that names why. */
export function checkAuthorizationResponse(
  path: string,
  params: URLSearchParams,
  expected: ExpectedResponse,
): string {
  if (path !== CALLBACK_PATH)
    throw new RemoteAuthError(
      'OAUTH_REDIRECT_MISMATCH',
      `The browser came back to ${JSON.stringify(path.slice(0, 100))}, not to the redirect path ${CALLBACK_PATH}; the answer is refused. Run the login again.`,
    );
  if (params.get('state') !== expected.state)
    throw new RemoteAuthError(
      'OAUTH_STATE_MISMATCH',
      'The browser came back with another state than the one ringfence sent (a forged or stale answer); it is refused. Run the login again.',
    );
  const iss = params.get('iss');
  // RFC 9207 §2.4: compared as strings, with no normalisation.
  if (iss !== null ? iss !== expected.issuer : expected.issRequired)
    throw new RemoteAuthError(
      'OAUTH_ISSUER_MISMATCH',
      iss === null
        ? `The authorization response carries no iss though ${expected.issuer} says it sends one (RFC 9207); it is refused.`
        : `The authorization response comes from another issuer (${JSON.stringify(iss.slice(0, 200))}, expected ${expected.issuer}); it is refused (RFC 9207 mix-up defence).`,
    );
  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description');
    throw new RemoteAuthError(
      'OAUTH_AUTHORIZATION_ERROR',
      `The authorization server answered ${JSON.stringify(error.slice(0, 80))}${
        description ? ` (${description.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 300)})` : ''
      }; no token was issued. ${error === 'access_denied' ? 'The login was declined in the browser; run it again to allow it.' : 'Run the login again, or ask the server operator.'}`,
    );
  }
  const code = params.get('code');
  if (!code)
    throw new RemoteAuthError(
      'OAUTH_AUTHORIZATION_ERROR',
      'The authorization response carries no code; run the login again.',
    );
  return code;
}
