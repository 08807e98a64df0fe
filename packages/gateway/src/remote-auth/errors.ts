import { RingfenceError } from '../errors.js';

/** Why a login or a discovery was refused; each code is one refusal named in docs/remote-auth.md. */
export type RemoteAuthErrorCode =
  /** A metadata or endpoint URL is plain http on a host that is not loopback. */
  | 'OAUTH_INSECURE_URL'
  /** Protected-resource metadata could not be found or read. */
  | 'OAUTH_NO_RESOURCE_METADATA'
  /** The protected-resource metadata names another server (its `resource`, or its origin). */
  | 'OAUTH_RESOURCE_MISMATCH'
  /** Authorization-server metadata could not be found or read. */
  | 'OAUTH_NO_AS_METADATA'
  /** The authorization server's metadata names another issuer than the URL it was fetched for. */
  | 'OAUTH_ISSUER_MISMATCH'
  /** The authorization server does not advertise PKCE S256. */
  | 'OAUTH_NO_PKCE'
  /** An endpoint that would receive a secret is on another origin than the issuer. */
  | 'OAUTH_ENDPOINT_ORIGIN'
  /** The organisation's policy does not list the authorization server. */
  | 'OAUTH_ISSUER_NOT_ALLOWED'
  /** No way to be known to the authorization server (metadata document, dynamic registration, client id). */
  | 'OAUTH_NO_CLIENT'
  /** Dynamic registration was refused or answered wrongly. */
  | 'OAUTH_REGISTRATION'
  /** The browser came back with another `state` than the one sent. */
  | 'OAUTH_STATE_MISMATCH'
  /** The browser came back to another path than the redirect URI. */
  | 'OAUTH_REDIRECT_MISMATCH'
  /** The authorization server answered the authorization request with an error. */
  | 'OAUTH_AUTHORIZATION_ERROR'
  /** The token endpoint refused the code (PKCE verifier, code, client). */
  | 'OAUTH_TOKEN_ERROR'
  /** The token is for another audience than this server. */
  | 'OAUTH_AUDIENCE'
  /** The person did not finish the login in time. */
  | 'OAUTH_TIMEOUT'
  /** A response was too large, too slow, redirected elsewhere or not JSON. */
  | 'OAUTH_BAD_RESPONSE';

export class RemoteAuthError extends RingfenceError<RemoteAuthErrorCode> {}
