// The light entry point: worker threads and the reaper load this file, not all of @ringfence/policy.
import { RingfenceError } from '@ringfence/policy/errors';

export { RingfenceError };

export type GatewayErrorCode =
  | 'ENGINE_UNREACHABLE'
  | 'ENGINE_CONFIG'
  | 'IMAGE_BUILD_FAILED'
  | 'IMAGE_CONTEXT'
  | 'NPM_FETCH'
  | 'HOME_INSECURE'
  /** The egress sidecar did not come up (no listener, exited, or no address on its network). */
  | 'SIDECAR_START'
  /** The reaper process did not report ready (exited, silent, or stopped while starting). */
  | 'REAPER_START'
  /** The reaper was started with arguments it cannot read. */
  | 'REAPER_ARGS'
  /** A built file the gateway runs is missing: the build is incomplete. */
  | 'BUILD_MISSING'
  /** A container's output stream broke its framing (the engine's attach protocol). */
  | 'ATTACH_FRAMING'
  /** Something took longer than its budget (a bounded wait whose failure is then reported). */
  | 'TIMED_OUT'
  /** A connection or a body ended before it was complete. */
  | 'CLOSED_EARLY'
  /** A transport was used against its contract (a second start, a reply to no request). */
  | 'TRANSPORT_MISUSE'
  /** The MCP SDK no longer behaves as the gateway relies on (a dependency upgrade broke it). */
  | 'SDK_CHANGED'
  /** A client's HTTP request was refused (method, media type, size): reported besides the answer. */
  | 'HTTP_REFUSED'
  /** A client stopped reading its event stream while its buffer filled, so the stream was dropped. */
  | 'STREAM_DROPPED'
  /** A state the code rules out was reached: a ringfence bug to report. */
  | 'INVARIANT';

/**
 * Local (non-wire) errors of the gateway library: the message says what happened and what to do.
 * They never cross the wire as they are; the serving side turns them into a result or a `WireError`.
 */
export class GatewayError extends RingfenceError<GatewayErrorCode> {}

/**
 * A JSON-RPC error answered to a peer (a client, or a server whose request is refused): `code` is
 * the number on the wire, as the MCP SDK reads it off a thrown error. Kept apart from the local,
 * string-coded `RingfenceError`s: a local error becomes a wire error only where the serving side
 * chooses the code and the text (see `rpcError` in serve/endpoint.ts).
 */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The error's `data`, sent as it is (the SDK copies it onto the wire when defined). */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
