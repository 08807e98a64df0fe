import { canonicalResource } from './discovery.js';
import { RemoteAuthError } from './errors.js';
import { type FetchLike, guardedFetch, jsonObject } from './safe-fetch.js';
import type { ClientRecord, TokenRecord } from './store.js';

/**
 * The token endpoint request of a login (authorization code + PKCE verifier + resource) and the
 * checks on its answer. Written here rather than with the SDK's `exchangeAuthorization` because
 * the SDK parses the answer through a schema that drops `aud`, and the audience check needs it
 * (and the raw error, to name a PKCE failure); every request still goes through guardedFetch.
 */

export interface TokenRequest {
  readonly token_endpoint: string;
  readonly client: ClientRecord;
  readonly auth_methods?: readonly string[];
  readonly params: Record<string, string>;
  /** The resource indicator the token must be for. */
  readonly resource: string;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

/** Removes every secret from a text that came from outside (an AS's error_description). */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

const oneLine = (value: unknown, max = 300): string =>
  String(value)
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .slice(0, max);

/** The `aud` of a JWT's payload, without verifying it (the server verifies; this only refuses early). */
function jwtAudience(token: string): string[] | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { aud?: unknown };
    if (typeof payload.aud === 'string') return [payload.aud];
    if (Array.isArray(payload.aud) && payload.aud.every((a) => typeof a === 'string')) return payload.aud;
  } catch {}
  return undefined;
}

const namesResource = (audiences: readonly string[], resource: string): boolean => {
  const canonical = canonicalResource(resource);
  return audiences.some((aud) => {
    try {
      return aud === resource || canonicalResource(aud) === canonical;
    } catch {
      return false;
    }
  });
};

/**
 * Refuses a token response whose audience is named and is not this server: the response's `aud`
 * or `resource`, and a JWT access token's `aud` claim. An opaque token with no audience said is
 * taken (the resource server checks it; ringfence only sends it to its own origin).
 */
export function checkAudience(body: Record<string, unknown>, resource: string): void {
  const said: string[][] = [];
  for (const key of ['aud', 'resource'] as const) {
    const value = body[key];
    if (typeof value === 'string') said.push([value]);
    else if (Array.isArray(value)) said.push(value.filter((v): v is string => typeof v === 'string'));
  }
  const jwt = typeof body.access_token === 'string' ? jwtAudience(body.access_token) : undefined;
  if (jwt) said.push(jwt);
  for (const audiences of said)
    if (!namesResource(audiences, resource))
      throw new RemoteAuthError(
        'OAUTH_AUDIENCE',
        `The authorization server issued a token for another audience (${oneLine(audiences.join(' '), 200)}), not for ${resource}; ringfence refuses it. The authorization server may not support resource indicators (RFC 8707): ask its operator.`,
      );
}

export async function requestToken(request: TokenRequest): Promise<TokenRecord> {
  const { client } = request;
  const body = new URLSearchParams({ ...request.params, resource: request.resource });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.client_secret) {
    // RFC 8414: client_secret_basic is the default when the AS lists no methods.
    const methods = request.auth_methods ?? ['client_secret_basic'];
    if (methods.includes('client_secret_basic'))
      headers.authorization = `Basic ${Buffer.from(
        `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`,
      ).toString('base64')}`;
    else {
      body.set('client_id', client.client_id);
      body.set('client_secret', client.client_secret);
    }
  } else body.set('client_id', client.client_id);
  const secrets = [client.client_secret, ...Object.values(request.params)];
  const response = await guardedFetch({ fetch: request.fetch, timeoutMs: request.timeoutMs })(
    request.token_endpoint,
    {
      method: 'POST',
      headers,
      body,
    },
  );
  const answer = await jsonObject(response, `answer of the token endpoint ${request.token_endpoint}`).catch(
    (error) => {
      if (!response.ok)
        throw new RemoteAuthError(
          'OAUTH_TOKEN_ERROR',
          `The token endpoint ${request.token_endpoint} refused (HTTP ${response.status}).`,
        );
      throw error;
    },
  );
  if (!response.ok || typeof answer.error === 'string') {
    const error = oneLine(redact(String(answer.error ?? `HTTP ${response.status}`), secrets), 80);
    const description = answer.error_description
      ? `: ${oneLine(redact(String(answer.error_description), secrets))}`
      : '';
    const pkce =
      request.params.grant_type === 'authorization_code' && error === 'invalid_grant'
        ? ' The code or its PKCE verifier was not accepted (a verifier that does not match the challenge, or a code used twice or expired); run the login again.'
        : '';
    throw new RemoteAuthError(
      'OAUTH_TOKEN_ERROR',
      `The token endpoint ${request.token_endpoint} refused (${error}${description}).${pkce}`,
    );
  }
  if (typeof answer.access_token !== 'string' || answer.access_token === '')
    throw new RemoteAuthError(
      'OAUTH_TOKEN_ERROR',
      `The token endpoint ${request.token_endpoint} answered no access_token.`,
    );
  if (typeof answer.token_type !== 'string' || answer.token_type.toLowerCase() !== 'bearer')
    throw new RemoteAuthError(
      'OAUTH_TOKEN_ERROR',
      `The token endpoint ${request.token_endpoint} answered a token of type ${oneLine(answer.token_type, 40)}; ringfence uses Bearer tokens only.`,
    );
  checkAudience(answer, request.resource);
  const now = (request.now ?? Date.now)();
  const expiresIn =
    typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : undefined;
  return {
    access_token: answer.access_token,
    token_type: 'Bearer',
    ...(typeof answer.refresh_token === 'string' && answer.refresh_token
      ? { refresh_token: answer.refresh_token }
      : {}),
    ...(expiresIn !== undefined ? { expires_at: now + Math.floor(expiresIn * 1000) } : {}),
    ...(typeof answer.scope === 'string' && answer.scope ? { scope: answer.scope } : {}),
    obtained_at: now,
  };
}
