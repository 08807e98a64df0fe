import { RingfenceError } from '@ringfence/policy';

export type CliErrorCode =
  /** An organisation policy is installed but fails a check: nothing starts until it is fixed. */
  | 'POLICY_REFUSED'
  /** Writing the installed policy failed (typically permissions on /etc/ringfence). */
  | 'POLICY_INSTALL_FAILED'
  /** `mcp auth …` named a server that is not a remote registration logged in by OAuth. */
  | 'OAUTH_NOT_REGISTERED'
  /** `--client-secret-stdin` read nothing usable. */
  | 'OAUTH_SECRET_INPUT';

/** Failures the command line itself reports, beyond those of the libraries it calls. */
export class CliError extends RingfenceError<CliErrorCode> {}
