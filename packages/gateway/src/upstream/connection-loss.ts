import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';

/**
 * The JSON-RPC error code `HttpClientTransport` answers a request with when the event stream that
 * should have carried its answer broke (outside of a call, which ends through `onCallBroken`).
 * SDK v1 called this `ErrorCode.ConnectionClosed`; v2 keeps that only as a local `SdkError`, so the
 * wire value is ours: -32000, in the range JSON-RPC leaves to implementations.
 */
export const CONNECTION_LOST_CODE = -32000;

/**
 * The request ended because the connection to the server went: the SDK's own `ConnectionClosed`
 * (the transport closed), or the synthesized error answer above. Both become `UPSTREAM_LOST`.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof SdkError) return error.code === SdkErrorCode.ConnectionClosed;
  return error instanceof ProtocolError && error.code === CONNECTION_LOST_CODE;
}
