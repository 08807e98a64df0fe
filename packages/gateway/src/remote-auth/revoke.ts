import { RemoteAuthError } from './errors.js';
import { offOriginRefusal } from './refresh.js';
import { type FetchLike, guardedFetch, requireSecureUrl } from './safe-fetch.js';
import type { OAuthEntry } from './store.js';
import { redact } from './token-request.js';

/**
 * Logout's revocation (RFC 7009): the refresh token first (revoking it ends the grant at most
 * servers), then the access token, at the revocation endpoint the login checked and stored (same
 * origin as the issuer unless the policy lists it, checked again here: `issuerListed`). A failure is reported, never thrown: the
 * tokens are forgotten locally either way, and the person is told which were not revoked.
 */
export interface RevocationOutcome {
  /** Which tokens the server confirmed revoked ('refresh_token', 'access_token'). */
  readonly revoked: readonly string[];
  /**
   * Tokens the server says it cannot revoke (RFC 7009 `unsupported_token_type`: typically a
   * self-contained JWT access token, valid until it expires; revoking the refresh token ends the grant).
   */
  readonly not_revocable?: readonly string[];
  /** Why revocation did not happen or failed, for people (no secret in it). */
  readonly problem?: string;
}

export async function revokeTokens(
  entry: OAuthEntry,
  options: {
    fetch?: FetchLike;
    timeoutMs?: number;
    /** Whether the policy lists the issuer (its revocation endpoint may then be off its origin). Absent: none is. */
    issuerListed?: (issuer: string) => boolean;
  } = {},
): Promise<RevocationOutcome> {
  const endpoint = entry.authorization_server.revocation_endpoint;
  const tokens = entry.tokens;
  if (!tokens) return { revoked: [] };
  if (!endpoint)
    return {
      revoked: [],
      problem: `${entry.authorization_server.issuer} offers no revocation endpoint; the tokens are forgotten here but stay valid there until they expire (revoke the grant in its account settings if you need to).`,
    };
  const offOrigin = offOriginRefusal(
    endpoint,
    entry.authorization_server.issuer,
    'revocation endpoint',
    options.issuerListed,
  );
  if (offOrigin)
    return {
      revoked: [],
      problem: `The tokens were not sent for revocation: ${offOrigin}. They are forgotten here but stay valid at ${entry.authorization_server.issuer} until they expire (revoke the grant in its account settings if you need to).`,
    };
  const fetchFn = guardedFetch({ fetch: options.fetch, timeoutMs: options.timeoutMs });
  const { client } = entry;
  const secrets = [tokens.access_token, tokens.refresh_token, client.client_secret];
  const revoked: string[] = [];
  const notRevocable: string[] = [];
  const outcome = (problem?: string): RevocationOutcome => ({
    revoked,
    ...(notRevocable.length ? { not_revocable: notRevocable } : {}),
    ...(problem ? { problem } : {}),
  });
  const order = [
    ['refresh_token', tokens.refresh_token],
    ['access_token', tokens.access_token],
  ] as const;
  try {
    requireSecureUrl(endpoint, 'revocation endpoint');
    for (const [hint, token] of order) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (client.client_secret)
        headers.authorization = `Basic ${Buffer.from(
          `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`,
        ).toString('base64')}`;
      else body.set('client_id', client.client_id);
      const response = await fetchFn(endpoint, { method: 'POST', headers, body });
      if (!response.ok) {
        const error = await response
          .json()
          .then((body) => (body as { error?: unknown }).error)
          .catch(() => undefined);
        if (error === 'unsupported_token_type') {
          notRevocable.push(hint);
          continue;
        }
        return outcome(
          `${endpoint} refused to revoke the ${hint.replace('_', ' ')} (HTTP ${response.status}).`,
        );
      }
      revoked.push(hint);
    }
    return outcome();
  } catch (error) {
    const message = error instanceof RemoteAuthError ? error.message : (error as Error).message;
    return outcome(redact(`Revocation at ${endpoint} failed: ${message}`, secrets));
  }
}
