import type { AuditDigest } from '../audit/index.js';

/**
 * The chain head as it left the machine: a distinct record in the stream (never an audit entry),
 * sent at the anchor interval and at the end of an export. `log` is the hash of the log's line 1,
 * which names the log: a log started afresh (or rewritten from its first line) has another.
 */
export interface ChainAnchor {
  readonly type: 'ringfence.anchor';
  readonly log: AuditDigest;
  readonly seq: number;
  readonly hash: AuditDigest;
  /** When the anchor was sent (the exporter's clock). */
  readonly ts: string;
  readonly host: string;
}

export const ANCHOR_TYPE = 'ringfence.anchor';

export function anchorRecord(anchor: Omit<ChainAnchor, 'type'>): string {
  const record: ChainAnchor = {
    type: ANCHOR_TYPE,
    log: anchor.log,
    seq: anchor.seq,
    hash: anchor.hash,
    ts: anchor.ts,
    host: anchor.host,
  };
  return JSON.stringify(record);
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The anchor a receiver stored, or undefined when `value` is not one. */
export function asAnchor(value: unknown): ChainAnchor | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.type !== ANCHOR_TYPE) return undefined;
  if (typeof v.log !== 'string' || !DIGEST.test(v.log)) return undefined;
  if (typeof v.hash !== 'string' || !DIGEST.test(v.hash)) return undefined;
  if (typeof v.seq !== 'number' || !Number.isSafeInteger(v.seq) || v.seq < 1) return undefined;
  return {
    type: ANCHOR_TYPE,
    log: v.log as AuditDigest,
    seq: v.seq,
    hash: v.hash as AuditDigest,
    ts: typeof v.ts === 'string' ? v.ts : '',
    host: typeof v.host === 'string' ? v.host : '',
  };
}
