/**
 * Errors with a stable `code` so callers (and the CLI's exit path) can branch on the kind of
 * failure rather than on message text.
 */
export type EgressErrorCode =
  | 'EGRESS_USAGE'
  | 'EGRESS_BAD_CIDR'
  | 'EGRESS_BAD_ALLOW_ENTRY'
  | 'EGRESS_BAD_RESOLVE_PIN'
  | 'EGRESS_BAD_LISTEN'
  | 'EGRESS_LIFELINE_STDIN'
  | 'EGRESS_LISTEN_FAILED';

export class EgressProxyError extends Error {
  readonly code: EgressErrorCode;
  constructor(code: EgressErrorCode, message: string) {
    super(message);
    this.name = 'EgressProxyError';
    this.code = code;
  }
}
