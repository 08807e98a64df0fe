import { RingfenceError } from '../errors.js';
import { isLoopbackAddress } from '../local-http/guard.js';
import { UpstreamError } from '../ports/errors.js';
import { clip, rendered } from '../text/render.js';
import type { OAuthEntry, TokenRecord } from './store.js';

/** Longest a refresh may take: it runs under the store's lock, which others wait 10 s for. */
export const REFRESH_TIMEOUT_MS = 8_000;
/** Largest token response read. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** The authorization server refused the refresh (an OAuth error answer, RFC 6749 §5.2). */
export class RefreshRefused extends RingfenceError<'REFRESH_REFUSED'> {
  constructor(
    /** The `error` code it gave (`invalid_grant`: revoked or expired), as it came (untrusted). */
    readonly oauthError: string,
  ) {
    super(
      'REFRESH_REFUSED',
      `the authorization server refused to renew the token (${rendered(clip(oauthError, 80), 'line')})`,
    );
  }
}

/** https, or http to a loopback host only (RFC 8252 §8.3 / MCP authorization): re-checked at each use. */
export function endpointRefusal(url: string, what: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `its ${what} is not a URL`;
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && isLoopbackAddress(parsed.hostname.replace(/^\[|\]$/g, '')))
    return undefined;
  return `its ${what} ${parsed.origin} is not https (plain http is allowed only on a loopback host)`;
}

/**
 * Why an endpoint that receives tokens (token, revocation) may not be used: it is on another
 * origin than the issuer's and the organisation's policy does not (or no longer) list the issuer
 * (`oauth.authorization_servers`), the rule discovery applies at login. Undefined: usable.
 */
export function offOriginRefusal(
  url: string,
  issuer: string,
  what: string,
  issuerListed: ((issuer: string) => boolean) | undefined,
): string | undefined {
  let endpoint: string;
  let issuerOrigin: string;
  try {
    endpoint = new URL(url).origin;
    issuerOrigin = new URL(issuer).origin;
  } catch {
    return `its ${what} or its issuer is not a URL`;
  }
  if (endpoint === issuerOrigin || issuerListed?.(issuer)) return undefined;
  return `its ${what} ${rendered(clip(endpoint, 200), 'line')} is not on the origin of its authorization server ${rendered(clip(issuerOrigin, 200), 'line')}, which is allowed only while the organisation's policy lists that issuer (oauth.authorization_servers), and it does not`;
}

/** The client's authentication at the token endpoint, as it was registered (RFC 6749 §2.3). */
function clientAuth(entry: OAuthEntry, form: URLSearchParams): Record<string, string> {
  const { client_id, client_secret, token_endpoint_auth_method } = entry.client;
  const method = token_endpoint_auth_method ?? (client_secret ? 'client_secret_basic' : 'none');
  if (method === 'client_secret_basic' && client_secret) {
    // RFC 6749 §2.3.1: each part form-urlencoded before base64.
    const pair = `${encodeURIComponent(client_id)}:${encodeURIComponent(client_secret)}`;
    return { authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
  }
  form.set('client_id', client_id);
  if (method === 'client_secret_post' && client_secret) form.set('client_secret', client_secret);
  return {};
}

const refused = (why: string) =>
  new UpstreamError('AUTH_REFUSED', `the token endpoint's answer was refused: ${why}`);

/**
 * The token response of a refresh, checked: a JSON object with a non-empty `access_token` of
 * type Bearer (another type would need a proof ringfence does not make, RFC 9449); `expires_in`
 * a positive number if present. A refresh token or scope it does not repeat stays as it was
 * (RFC 6749 §6: the server may keep the refresh token).
 */
export function parseTokenResponse(body: unknown, previous: TokenRecord, now: number): TokenRecord {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw refused('it is not a JSON object');
  const answer = body as Record<string, unknown>;
  if (typeof answer.access_token !== 'string' || answer.access_token === '')
    throw refused('it has no access_token');
  if (typeof answer.token_type !== 'string' || answer.token_type.toLowerCase() !== 'bearer')
    throw refused(
      `its token_type is ${JSON.stringify(rendered(clip(String(answer.token_type), 40), 'line'))}, not Bearer`,
    );
  const expiresIn = answer.expires_in;
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !(expiresIn > 0)))
    throw refused('its expires_in is not a positive number');
  if (
    answer.refresh_token !== undefined &&
    (typeof answer.refresh_token !== 'string' || !answer.refresh_token)
  )
    throw refused('its refresh_token is not a string');
  if (answer.scope !== undefined && typeof answer.scope !== 'string')
    throw refused('its scope is not a string');
  const refreshToken = (answer.refresh_token as string | undefined) ?? previous.refresh_token;
  const scope = (answer.scope as string | undefined) ?? previous.scope;
  return {
    access_token: answer.access_token,
    token_type: 'Bearer',
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    ...(typeof expiresIn === 'number' ? { expires_at: now + Math.floor(expiresIn * 1000) } : {}),
    ...(scope ? { scope } : {}),
    obtained_at: now,
  };
}

/**
 * One refresh_token grant (RFC 6749 §6) at the stored token endpoint, with the `resource`
 * indicator (RFC 8707) naming the server and the client's registered authentication. Redirects
 * are not followed (the refresh token is in the body). Resolves with the new tokens; rejects with
 * {@link RefreshRefused} for an OAuth error answer, an `AUTH_REFUSED` error for an answer that
 * is not acceptable, and an `UPSTREAM_LOST` error when the endpoint could not be asked.
 */
export async function refreshTokens(
  entry: OAuthEntry,
  options: { now: () => number; timeoutMs?: number },
): Promise<TokenRecord> {
  const previous = entry.tokens;
  if (!previous?.refresh_token) throw new RefreshRefused('no refresh token');
  const endpoint = entry.authorization_server.token_endpoint;
  const plain = endpointRefusal(endpoint, 'token endpoint');
  if (plain) throw new UpstreamError('AUTH_REFUSED', `the token cannot be renewed: ${plain}`);
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: previous.refresh_token,
    resource: entry.resource,
  });
  const headers = clientAuth(entry, form);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? REFRESH_TIMEOUT_MS),
    });
  } catch (error) {
    // The cause may quote the request: only its name is said.
    throw new UpstreamError(
      'UPSTREAM_LOST',
      `the token endpoint ${new URL(endpoint).origin} could not be reached (${(error as Error).name})`,
    );
  }
  const text = await readCapped(response);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status >= 300 && response.status < 400)
    throw refused(`it answered ${response.status} (a redirect, not followed)`);
  if (!response.ok) {
    const error = (body as { error?: unknown } | undefined)?.error;
    if (response.status === 400 || response.status === 401)
      throw new RefreshRefused(typeof error === 'string' ? error : `HTTP ${response.status}`);
    throw new UpstreamError(
      'UPSTREAM_LOST',
      `the token endpoint ${new URL(endpoint).origin} answered HTTP ${response.status}`,
    );
  }
  if (body === undefined) throw refused('it is not JSON');
  return parseTokenResponse(body, previous, options.now());
}

async function readCapped(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      throw refused(`it is over ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
