/**
 * The two stdout line shapes: one decision per attempt, one close per finished tunnel. The
 * gateway audits the decisions, so the field set is fixed: nothing is added here without
 * changing the contract (docs/egress-proxy.md, "Log lines").
 */
export interface EgressDecision {
  readonly method: string;
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  readonly reason: string;
  readonly address?: string;
  readonly status: number;
}

export interface TunnelClose {
  readonly host: string;
  readonly port: number;
  readonly bytes_in: number;
  readonly bytes_out: number;
  readonly duration_ms: number;
}

export const DECISION_EVENT = 'egress';
export const CLOSE_EVENT = 'close';

// Lines are assembled by hand in the contract's field order: this runs once or twice per
// request, and JSON.stringify of a fresh object costs more. Strings still go through
// JSON.stringify, so a hostile host or method cannot break out of its field.

/** One decision line, newline included. */
export function formatDecisionLine(d: EgressDecision, ts: string): string {
  return (
    `{"ts":"${ts}","event":"egress","method":${JSON.stringify(d.method)},` +
    `"host":${JSON.stringify(d.host)},"port":${d.port},"allowed":${d.allowed},` +
    `"reason":${JSON.stringify(d.reason)},` +
    (d.address !== undefined ? `"address":${JSON.stringify(d.address)},` : '') +
    `"status":${d.status}}\n`
  );
}

/** One tunnel-close line, newline included. */
export function formatCloseLine(c: TunnelClose, ts: string): string {
  return (
    `{"ts":"${ts}","event":"close","host":${JSON.stringify(c.host)},"port":${c.port},` +
    `"bytes_in":${c.bytes_in},"bytes_out":${c.bytes_out},"duration_ms":${c.duration_ms}}\n`
  );
}

/**
 * The longest line {@link parseDecisionLine} reads. A real decision line is well under 8 KiB
 * (hosts are cut at 1 KiB even with every character escaped); anything longer did not come from
 * the proxy and is not worth a JSON parse.
 */
export const MAX_DECISION_LINE = 16 * 1024;

/**
 * A decision line as read back. `method`, `address` and `status` are optional because the
 * reader is lenient where it can be: a status outside 100-599 is dropped rather than trusted.
 */
export interface EgressDecisionLine {
  readonly event: 'egress';
  readonly ts?: string;
  readonly method?: string;
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  readonly reason: string;
  readonly address?: string;
  readonly status?: number;
}

/** Reads a JSON object from one line, own properties only, or `undefined`. */
export function parseJsonObjectLine(line: string, max: number): Map<string, unknown> | undefined {
  if (typeof line !== 'string' || line.length > max) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  // A Map of own entries: a `__proto__` key in the line is data, never a prototype to read through.
  return new Map(Object.entries(value));
}

const isPort = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535;

/**
 * Parses one stdout line of the proxy. Only decisions come back: close lines, blank lines and
 * anything that is not a well-formed decision give `undefined`, because the sidecar's stdout is
 * read defensively. Only the contract's fields are returned, never anything else the line held.
 */
export function parseDecisionLine(line: string): EgressDecisionLine | undefined {
  const v = parseJsonObjectLine(line, MAX_DECISION_LINE);
  if (v === undefined || v.get('event') !== DECISION_EVENT) return undefined;
  const host = v.get('host');
  const port = v.get('port');
  const allowed = v.get('allowed');
  const reason = v.get('reason');
  if (typeof host !== 'string' || typeof allowed !== 'boolean' || typeof reason !== 'string')
    return undefined;
  if (!isPort(port)) return undefined;
  const ts = v.get('ts');
  const method = v.get('method');
  const address = v.get('address');
  const status = v.get('status');
  return {
    event: DECISION_EVENT,
    ...(typeof ts === 'string' ? { ts } : {}),
    ...(typeof method === 'string' ? { method } : {}),
    host,
    port,
    allowed,
    reason,
    ...(typeof address === 'string' ? { address } : {}),
    ...(Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599
      ? { status: status as number }
      : {}),
  };
}
