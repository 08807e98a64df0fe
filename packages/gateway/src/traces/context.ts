import { randomFillSync } from 'node:crypto';

/**
 * W3C Trace Context, version 00: `00-TRACEID-PARENTID-FLAGS`, neither id all zeros. A client's
 * value is passed on (upstream, into the audit log) only in exactly this form: it is the client's
 * text, and no server or log line is handed anything else under that name.
 */
export const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The checked traceparent, or undefined for anything that is not one. */
export function checkedTraceparent(value: unknown): string | undefined {
  return typeof value === 'string' && TRACEPARENT.test(value) ? value : undefined;
}

/** The 32-hex trace id of a checked traceparent. */
export const traceIdOf = (traceparent: string): string => traceparent.slice(3, 35);
/** The 16-hex parent (span) id of a checked traceparent. */
export const parentIdOf = (traceparent: string): string => traceparent.slice(36, 52);
/** Whether the caller sampled (recorded) its side of the trace: flag bit 0. */
export const sampledIn = (traceparent: string): boolean =>
  (Number.parseInt(traceparent.slice(53, 55), 16) & 1) === 1;

export const formatTraceparent = (traceId: string, spanId: string, sampled = true): string =>
  `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;

// Ids come from one pool of random bytes refilled as it runs out: one syscall per 256 span ids
// rather than one per span.
const POOL = Buffer.alloc(4096);
let used = POOL.length;

function randomHex(bytes: number): string {
  for (;;) {
    if (used + bytes > POOL.length) {
      randomFillSync(POOL);
      used = 0;
    }
    const hex = POOL.toString('hex', used, used + bytes);
    used += bytes;
    // An all-zero id is invalid (W3C): drawn again, as unlikely as that is.
    if (!/^0+$/.test(hex)) return hex;
  }
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
