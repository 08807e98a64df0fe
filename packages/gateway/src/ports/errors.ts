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
  | 'MISSING_CLIENT_CAPABILITY'
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

/**
 * A 2026 server refused a request because it needs a client capability the request did not
 * declare (`-32021`, MissingRequiredClientCapability). The gateway passes it on to its client as
 * that error. The message is the gateway's (it says which side lacks the capability and what to
 * do); `serverMessage` is the server's own text, still untrusted; `requiredCapabilities` what the
 * server named, already bounded (`upstream/client-capabilities.ts`).
 */
export class MissingClientCapability extends UpstreamError {
  constructor(
    message: string,
    readonly serverMessage: string,
    readonly requiredCapabilities: Readonly<Record<string, Record<string, unknown>>>,
  ) {
    super('MISSING_CLIENT_CAPABILITY', message);
  }
}
