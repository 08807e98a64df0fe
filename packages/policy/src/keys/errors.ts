import { RingfenceError } from '../errors.js';

/** Codes raised while reading or writing key files. */
export type KeyErrorCode = 'KEY_FILE_INVALID' | 'KEY_FILE_UNSAFE' | 'KEY_FILE_EXISTS' | 'KEY_FILE_UNREADABLE';

/** A key file that cannot be used. */
export class KeyError extends RingfenceError<KeyErrorCode> {}
