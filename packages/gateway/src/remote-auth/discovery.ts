import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';
import { RemoteAuthError } from './errors.js';
import { type FetchLike, guardedFetch, requireSecureUrl } from './safe-fetch.js';
import type { AuthorizationServerRecord } from './store.js';
import { parseWwwAuthenticate } from './www-authenticate.js';

/**
 * Where an MCP server's tokens come from (MCP authorization 2025-11-25 / 2026-07-28, "Authorization
 * Server Discovery"), with the checks that decide whether ringfence trusts the answer:
 *
 * 1. Protected-resource metadata (RFC 9728): the `resource_metadata` URL of the 401's Bearer
 *    challenge when there is one (it must be on the server's own origin), else the well-known URIs
 *    in the spec's order: path-inserted (`/.well-known/oauth-protected-resource/<path>`), then root.
 *    Its `resource` must name this server: same origin, and the server's path or a parent of it on a
 *    segment boundary (RFC 9728 §3.3 / §7.3); that `resource` is the indicator (RFC 8707) asked for.
 * 2. The authorization server: the first of `authorization_servers` that the organisation's
 *    policy allows (all when there is no list).
 * 3. Its metadata: RFC 8414 path-inserted, then OpenID discovery path-inserted, then OpenID
 *    path-appended (root issuers: RFC 8414, then OpenID); the document's `issuer` must be identical
 *    to the issuer it was fetched for (RFC 8414 §3.3), `code_challenge_methods_supported` must
 *    list S256, and every URL must be https (plain http on loopback only).
 * 4. The endpoints a secret is sent to (token, registration, revocation) must be on the issuer's
 *    own origin, unless the organisation's signed policy lists that issuer: the spec lets an
 *    issuer's metadata name endpoints anywhere, but a metadata document that sends a refresh token
 *    or a client secret to another origin is what a compromised or mistaken document looks like,
 *    so only an issuer the organisation vouched for may do it. The authorization endpoint only sees
 *    the browser (no secret), so it may be on another https origin.
 *
 * The SDK (v2) does the well-known URL building and the HTTP of steps 1 and 3
 * (`discoverOAuthProtectedResourceMetadata`, `discoverAuthorizationServerMetadata`); every request
 * it makes goes through {@link guardedFetch}. Its issuer check tolerates a trailing-slash
 * difference, which the spec does not, so it is off and the identical comparison is done here.
 */

export interface DiscoverOptions {
  /** The `WWW-Authenticate` header of the server's 401, when discovery starts from one. */
  readonly wwwAuthenticate?: string | null;
  /** undefined when the organisation's policy allows this issuer, else why not (who to ask). */
  readonly issuerAllowed?: (issuer: string) => string | undefined;
  /** True when the organisation's policy lists this issuer by name (endpoints may leave its origin). */
  readonly issuerListed?: (issuer: string) => boolean;
  /** The fetch underneath {@link guardedFetch} (tests). */
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
}

export interface Discovery {
  /** The resource indicator (RFC 8707) for authorization and token requests. */
  readonly resource: string;
  /** The only origin the access token is ever sent to. */
  readonly resource_origin: string;
  readonly resource_metadata_url?: string;
  /** The scopes of the protected-resource metadata (the spec's fallback when no challenge scope). */
  readonly scopes_supported?: readonly string[];
  /** The scope of the Bearer challenge, when discovery started from a 401 that named one. */
  readonly challenge_scope?: string;
  readonly authorization_server: AuthorizationServerRecord;
  readonly client_id_metadata_document_supported: boolean;
  readonly token_endpoint_auth_methods_supported?: readonly string[];
  /** RFC 9207: the AS says its authorization responses carry `iss` (then one without is refused). */
  readonly iss_parameter_supported: boolean;
}

/** The canonical form of a server URL (lowercase scheme and host, no fragment, no lone "/"). */
export function canonicalResource(serverUrl: string | URL): string {
  const url = new URL(String(serverUrl));
  url.hash = '';
  const href = url.href;
  return url.pathname === '/' && !url.search ? href.slice(0, -1) : href;
}

/** True when `resource` names the server at `serverUrl`: same origin, its path or a parent of it. */
export function resourceNamesServer(resource: string, serverUrl: string | URL): boolean {
  let named: URL;
  try {
    named = new URL(resource);
  } catch {
    return false;
  }
  const server = new URL(String(serverUrl));
  if (named.origin !== server.origin || named.hash || named.search) return false;
  const trim = (path: string) => path.replace(/\/+$/, '');
  const parent = trim(named.pathname);
  const path = trim(server.pathname);
  return parent === path || parent === '' || path.startsWith(`${parent}/`);
}

const stringArray = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;

const sdkFailure = (
  code: 'OAUTH_NO_RESOURCE_METADATA' | 'OAUTH_NO_AS_METADATA',
  what: string,
  error: unknown,
) =>
  error instanceof RemoteAuthError
    ? error
    : new RemoteAuthError(
        code,
        `${what} (${
          (error as Error).name === 'ZodError'
            ? 'the document lacks fields the RFC requires, or has them of the wrong type'
            : (error as Error).message.split('\n')[0]?.slice(0, 300)
        }).`,
        {
          cause: error,
        },
      );

export async function discover(serverUrl: string, options: DiscoverOptions = {}): Promise<Discovery> {
  const server = requireSecureUrl(serverUrl, "MCP server's URL");
  const fetchFn = guardedFetch({ fetch: options.fetch, timeoutMs: options.timeoutMs });
  const challenge = parseWwwAuthenticate(options.wwwAuthenticate);
  let metadataUrl: URL | undefined;
  if (challenge?.resource_metadata) {
    metadataUrl = requireSecureUrl(challenge.resource_metadata, 'resource_metadata URL of the 401');
    if (metadataUrl.origin !== server.origin)
      throw new RemoteAuthError(
        'OAUTH_RESOURCE_MISMATCH',
        `The server's 401 points at resource metadata on another origin (${metadataUrl.origin}, the server is ${server.origin}); ringfence reads a server's metadata from its own origin only.`,
      );
  }

  let prm: Record<string, unknown>;
  try {
    prm = (await discoverOAuthProtectedResourceMetadata(
      server,
      metadataUrl ? { resourceMetadataUrl: metadataUrl } : {},
      fetchFn,
    )) as Record<string, unknown>;
  } catch (error) {
    throw sdkFailure(
      'OAUTH_NO_RESOURCE_METADATA',
      `${server.origin}${server.pathname} publishes no usable OAuth protected-resource metadata (RFC 9728), so ringfence cannot tell where to log in; check the URL, or ask its operator`,
      error,
    );
  }
  const resource = typeof prm.resource === 'string' ? prm.resource : '';
  if (!resourceNamesServer(resource, server))
    throw new RemoteAuthError(
      'OAUTH_RESOURCE_MISMATCH',
      `The protected-resource metadata of ${server.origin}${server.pathname} is for another resource (${JSON.stringify(resource).slice(0, 200)}); ringfence will not get a token for one server from another's metadata.`,
    );
  const listed = stringArray(prm.authorization_servers) ?? [];
  if (listed.length === 0)
    throw new RemoteAuthError(
      'OAUTH_NO_RESOURCE_METADATA',
      `The protected-resource metadata of ${server.origin} lists no authorization server.`,
    );

  const refusals: string[] = [];
  let issuer: string | undefined;
  for (const candidate of listed) {
    const reason = options.issuerAllowed?.(candidate);
    if (reason === undefined) {
      issuer = candidate;
      break;
    }
    refusals.push(reason);
  }
  if (issuer === undefined) throw new RemoteAuthError('OAUTH_ISSUER_NOT_ALLOWED', refusals.join(' '));
  requireSecureUrl(issuer, 'authorization server (issuer)');

  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn, skipIssuerValidation: true });
  } catch (error) {
    throw sdkFailure(
      'OAUTH_NO_AS_METADATA',
      `The authorization server ${issuer} has no usable metadata`,
      error,
    );
  }
  if (!metadata)
    throw new RemoteAuthError(
      'OAUTH_NO_AS_METADATA',
      `The authorization server ${issuer} publishes no metadata at its RFC 8414 or OpenID discovery addresses; ringfence cannot log in there.`,
    );
  if (metadata.issuer !== issuer)
    throw new RemoteAuthError(
      'OAUTH_ISSUER_MISMATCH',
      `The metadata fetched for the authorization server ${issuer} names another issuer (${JSON.stringify(metadata.issuer).slice(0, 200)}); RFC 8414 §3.3 says it must not be used.`,
    );
  if (!stringArray(metadata.code_challenge_methods_supported)?.includes('S256'))
    throw new RemoteAuthError(
      'OAUTH_NO_PKCE',
      `The authorization server ${issuer} does not list S256 in code_challenge_methods_supported; ringfence logs in only with PKCE S256 (the MCP spec requires it). Ask the server's operator.`,
    );
  const issuerOrigin = new URL(issuer).origin;
  const endpoint = (
    key: 'authorization_endpoint' | 'token_endpoint' | 'registration_endpoint' | 'revocation_endpoint',
  ) => {
    const value = (metadata as Record<string, unknown>)[key];
    if (value === undefined) return undefined;
    const url = requireSecureUrl(value, `${key} of ${issuer}`);
    if (key !== 'authorization_endpoint' && url.origin !== issuerOrigin && !options.issuerListed?.(issuer))
      throw new RemoteAuthError(
        'OAUTH_ENDPOINT_ORIGIN',
        `The metadata of ${issuer} sends its ${key.replace('_', ' ')} to another origin (${url.origin}); ringfence sends tokens and client secrets only to the issuer's own origin, unless the organisation's policy lists this issuer (oauth.authorization_servers).`,
      );
    return url.href;
  };
  const authorization_endpoint = endpoint('authorization_endpoint');
  const token_endpoint = endpoint('token_endpoint');
  if (!authorization_endpoint || !token_endpoint)
    throw new RemoteAuthError(
      'OAUTH_NO_AS_METADATA',
      `The metadata of ${issuer} has no authorization or token endpoint.`,
    );
  const registration_endpoint = endpoint('registration_endpoint');
  const revocation_endpoint = endpoint('revocation_endpoint');
  const raw = metadata as Record<string, unknown>;
  return {
    resource,
    resource_origin: server.origin,
    ...(metadataUrl ? { resource_metadata_url: metadataUrl.href } : {}),
    ...(stringArray(prm.scopes_supported) ? { scopes_supported: stringArray(prm.scopes_supported)! } : {}),
    ...(challenge?.scope ? { challenge_scope: challenge.scope } : {}),
    authorization_server: {
      issuer,
      authorization_endpoint,
      token_endpoint,
      ...(registration_endpoint ? { registration_endpoint } : {}),
      ...(revocation_endpoint ? { revocation_endpoint } : {}),
    },
    client_id_metadata_document_supported: raw.client_id_metadata_document_supported === true,
    ...(stringArray(raw.token_endpoint_auth_methods_supported)
      ? { token_endpoint_auth_methods_supported: stringArray(raw.token_endpoint_auth_methods_supported)! }
      : {}),
    iss_parameter_supported: raw.authorization_response_iss_parameter_supported === true,
  };
}
