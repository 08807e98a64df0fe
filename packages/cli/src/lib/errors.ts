import { RingfenceError } from '@ringfence/policy';

export type CliErrorCode =
  /** An organisation policy is installed but fails a check: nothing starts until it is fixed. */
  | 'POLICY_REFUSED'
  /** Writing the installed policy failed (typically permissions on /etc/ringfence). */
  | 'POLICY_INSTALL_FAILED';

/** Failures the command line itself reports, beyond those of the libraries it calls. */
export class CliError extends RingfenceError<CliErrorCode> {}
