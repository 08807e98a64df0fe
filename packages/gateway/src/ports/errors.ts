import { RingfenceError } from '@ringfence/policy';

export type UpstreamErrorCode =
  | 'SERVER_START_TIMEOUT'
  | 'SERVER_NOT_STARTED'
  | 'SERVER_STOPPED_WHILE_STARTING'
  | 'CONTAINERS_UNAVAILABLE'
  | 'ENGINE_LIMITS'
  | 'UPSTREAM_CONNECT'
  | 'UPSTREAM_REDIRECT'
  | 'UPSTREAM_ANSWER_TOO_LARGE'
  | 'UPSTREAM_CLOSING'
  | 'UPSTREAM_CLOSED'
  | 'UPSTREAM_LOST'
  | 'UPSTREAM_MALFORMED'
  | 'CALL_CANCELLED'
  | 'CALL_TIMEOUT'
  | 'CALL_CEILING'
  | 'IMAGE_MISSING'
  | 'IMAGE_MOVED'
  | 'POLICY_REFUSED'
  | 'SIDECAR_IMAGE_MISSING'
  | 'ENGINE_CANNOT_CONTAIN'
  /** A remote server's OAuth login is missing, expired, revoked, or too narrow (remote-auth/). */
  | 'LOGIN_NEEDED'
  /** A held token may not be used or refreshed (issuer policy, plain-http endpoint, a bad answer). */
  | 'AUTH_REFUSED';

/**
 * Why a server could not be started or reached, from either side of the ports (runtime/ or
 * upstream/). A local error: the gateway turns it into a stderr line or a tool result that says
 * what to do; it never crosses the wire as a JSON-RPC error.
 */
export class UpstreamError extends RingfenceError<UpstreamErrorCode> {}
