import { RingfenceError } from '@ringfence/policy';

/** Codes raised while writing or reading the audit log (verification returns codes, never throws). */
export type AuditErrorCode =
  /** The last line has no newline: a writer died mid-line. Appending after it would hide that. */
  | 'AUDIT_TORN_TAIL'
  /** The last complete line is not an entry this version can chain onto. */
  | 'AUDIT_TAIL_CORRUPT'
  /** The log path is not a regular file we may write (a link, a directory, another owner's file). */
  | 'AUDIT_NOT_A_FILE'
  /** open/write/fsync failed; the entry is not on disk. */
  | 'AUDIT_WRITE_FAILED'
  /** Another process held the log's lock past the timeout (or died holding it and left it behind). */
  | 'AUDIT_LOCK_TIMEOUT'
  /** An entry handed to append() does not have the documented shape. */
  | 'AUDIT_INVALID_ENTRY'
  /** append() after close(). */
  | 'AUDIT_CLOSED'
  /** Reading the log for display failed (open, read, or the file shrank under the reader). */
  | 'AUDIT_READ_FAILED'
  /** A "line" longer than any entry this version writes: the file is not a log. */
  | 'AUDIT_LINE_TOO_LONG';

/** An audit entry could not be written. Callers must treat this as "do not forward the call". */
export class AuditError extends RingfenceError<AuditErrorCode> {}
