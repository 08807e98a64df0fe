import { RingfenceError } from '../errors.js';

/** Why a batch of spans did not reach the collector: said on stderr (rate-limited), never to a call. */
export class TraceExportError extends RingfenceError<
  'EXPORT_REFUSED' | 'EXPORT_UNREACHABLE' | 'EXPORT_TIMEOUT'
> {}
