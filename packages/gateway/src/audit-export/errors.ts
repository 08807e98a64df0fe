import { RingfenceError } from '../errors.js';

/** Codes of the audit export (local errors: they never cross the MCP wire). */
export type ExportErrorCode =
  /** A `--to` URL or an `audit-export.json` sink this version cannot use. */
  | 'EXPORT_TARGET'
  /** `audit-export.json` is not valid. */
  | 'EXPORT_SETTINGS'
  /** The local log no longer continues from the position already exported (rewritten, cut, replaced). */
  | 'EXPORT_LOG_DIVERGED'
  /** A line of the local log is not a chained entry: the log is broken (run `audit verify`). */
  | 'EXPORT_LOG_BROKEN'
  /** The position file is unreadable or not a position. */
  | 'EXPORT_POSITION'
  /** Another process already exports this sink. */
  | 'EXPORT_BUSY'
  /** The collector could not be reached or written to (retried with backoff). */
  | 'EXPORT_SINK'
  /** An octet-counted syslog stream that does not frame (a receiver's parse). */
  | 'EXPORT_FRAMING'
  /** The receiver's file given to `audit verify --against` could not be read. */
  | 'EXPORT_AGAINST_UNREADABLE';

export class ExportError extends RingfenceError<ExportErrorCode> {}
