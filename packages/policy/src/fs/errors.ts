import { RingfenceError } from '../errors.js';

/** Codes raised by the file helpers. */
export type FsErrorCode = 'LOCK_TIMEOUT' | 'WRITE_FAILED';

/** A file could not be written or locked safely. */
export class FsError extends RingfenceError<FsErrorCode> {}
