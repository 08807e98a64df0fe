import { RingfenceError } from '@ringfence/policy';

export type RegistrationErrorCode =
  /** The flags do not describe one server (none or two sources, a flag of the other transport…). */
  | 'REGISTRATION_USAGE'
  /** The image is not on this host: ringfence never pulls implicitly. */
  | 'REGISTRATION_IMAGE_MISSING'
  /** The organisation policy does not allow the image or the egress asked for. */
  | 'REGISTRATION_POLICY'
  /** `mcp pull` of a remote server: there is no image. */
  | 'REGISTRATION_NOT_CONTAINED'
  /** The engine could not pull the image. */
  | 'REGISTRATION_PULL_FAILED';

/** A server could not be registered (or its image re-recorded); nothing was written. */
export class RegistrationError extends RingfenceError<RegistrationErrorCode> {}
