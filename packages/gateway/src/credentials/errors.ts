import { RingfenceError } from '@ringfence/policy';

export type CredentialErrorCode =
  /** A credential's name, class or binding is not valid (the message says the form). */
  | 'CREDENTIAL_USAGE'
  /** No credential of that name is stored. */
  | 'CREDENTIAL_UNKNOWN'
  /** The credential may not go where it was asked to (not bound, no network, a host its class does not fit). */
  | 'CREDENTIAL_NOT_BOUND'
  /** The backend holding a value did not answer (the keyring is gone or locked, the key file is missing). */
  | 'CREDENTIAL_BACKEND'
  /** A stored value could not be decrypted: the file or its key was changed. */
  | 'CREDENTIAL_DAMAGED';

/**
 * A credential could not be stored, read or used. The message never carries a value: it names
 * the credential and says what to do.
 */
export class CredentialError extends RingfenceError<CredentialErrorCode> {}
