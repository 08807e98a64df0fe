import { type AuthorizationServerMetadata, registerClient } from '@modelcontextprotocol/client';
import type { Discovery } from './discovery.js';
import { RemoteAuthError } from './errors.js';
import { type FetchLike, guardedFetch, requireSecureUrl } from './safe-fetch.js';
import type { ClientRecord } from './store.js';

/**
 * How ringfence becomes known to an authorization server, in the MCP spec's order
 * (2025-11-25 / 2026-07-28 "Client Registration", priority list):
 * 1. a pre-registered client (`mcp add --client-id ID [--client-secret-stdin]`): the person or the
 *    organisation set it up with the authorization server, so it wins;
 * 2. a client ID metadata document, when the AS advertises `client_id_metadata_document_supported`
 *    and the registration names the document's URL (`mcp add --client-metadata-url`; the
 *    organisation hosts it on https with `redirect_uris: ["http://127.0.0.1/callback"]`);
 * 3. dynamic client registration (RFC 7591) when the AS has a registration endpoint: a public
 *    native client, `token_endpoint_auth_method: none`, the loopback redirect URI, PKCE;
 * 4. otherwise a refusal that says which of these to provide.
 * A client is bound to the issuer that issued it (spec "Authorization Server Binding"): a stored
 * client of another issuer is never reused.
 */

export interface ClientChoice {
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly client_metadata_url?: string;
  /** The client of an earlier login, reused when it is for this issuer and redirect URI. */
  readonly previous?: { readonly issuer: string; readonly client: ClientRecord };
}

export const CALLBACK_PATH = '/callback';

export async function obtainClient(
  discovery: Discovery,
  redirectUri: string,
  choice: ClientChoice,
  options: { fetch?: FetchLike; timeoutMs?: number } = {},
): Promise<ClientRecord> {
  const issuer = discovery.authorization_server.issuer;
  if (choice.client_id)
    return {
      client_id: choice.client_id,
      via: 'pre-registered',
      redirect_uri: redirectUri,
      ...(choice.client_secret ? { client_secret: choice.client_secret } : {}),
    };
  if (choice.client_metadata_url && discovery.client_id_metadata_document_supported) {
    const url = requireSecureUrl(choice.client_metadata_url, 'client ID metadata document URL');
    if (url.protocol !== 'https:' || url.pathname === '/')
      throw new RemoteAuthError(
        'OAUTH_NO_CLIENT',
        'The client ID metadata document URL must be https with a path.',
      );
    return { client_id: url.href, via: 'metadata-document', redirect_uri: redirectUri };
  }
  const previous = choice.previous;
  if (
    previous &&
    previous.issuer === issuer &&
    previous.client.via === 'dynamic' &&
    previous.client.redirect_uri === redirectUri
  )
    return previous.client;
  const endpoint = discovery.authorization_server.registration_endpoint;
  if (!endpoint)
    throw new RemoteAuthError(
      'OAUTH_NO_CLIENT',
      `The authorization server ${issuer} offers no dynamic client registration${
        discovery.client_id_metadata_document_supported
          ? ' (it accepts a client ID metadata document: give its URL with --client-metadata-url)'
          : ''
      }; register a client with it by hand and give it with: ringfence mcp add NAME --url URL --oauth --client-id ID [--client-secret-stdin].`,
    );
  let registered: Awaited<ReturnType<typeof registerClient>>;
  try {
    registered = await registerClient(issuer, {
      metadata: { issuer, registration_endpoint: endpoint } as AuthorizationServerMetadata,
      clientMetadata: {
        client_name: 'ringfence',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        // No `scope`: an AS may bind the client to it, and a later step-up would be refused.
      } as never,
      fetchFn: guardedFetch({ fetch: options.fetch, timeoutMs: options.timeoutMs }),
    });
  } catch (error) {
    if (error instanceof RemoteAuthError) throw error;
    throw new RemoteAuthError(
      'OAUTH_REGISTRATION',
      `Dynamic client registration at ${endpoint} failed (${(error as Error).message.split('\n')[0]?.slice(0, 300)}); register a client by hand and give it with --client-id.`,
      { cause: error },
    );
  }
  if (typeof registered.client_id !== 'string' || registered.client_id === '')
    throw new RemoteAuthError(
      'OAUTH_REGISTRATION',
      `Dynamic client registration at ${endpoint} answered no client_id.`,
    );
  return {
    client_id: registered.client_id,
    via: 'dynamic',
    redirect_uri: redirectUri,
    ...(typeof registered.client_secret === 'string' && registered.client_secret
      ? { client_secret: registered.client_secret }
      : {}),
  };
}
