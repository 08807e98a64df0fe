import type { AuditInput, EgressRefs } from './types.js';

export type EgressInput = Extract<AuditInput, { type: 'mcp.egress' }>;

/**
 * Turns one stdout line of `ringfence-egress-proxy` (DESIGN.md section 7) into an `mcp.egress`
 * entry for `server`. Only decisions become entries: tunnel-close lines, blank lines and anything
 * that is not a well-formed decision give `undefined` (the proxy's stdout is the sidecar's, so it is
 * parsed defensively). Only host, port, verdict, reason and status are kept: never a path or URL.
 */
export function egressInputFromProxyLine(server: string, line: string): EgressInput | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.event !== 'egress') return undefined;
  if (typeof v.host !== 'string' || typeof v.allowed !== 'boolean' || typeof v.reason !== 'string')
    return undefined;
  if (!Number.isInteger(v.port) || (v.port as number) < 0 || (v.port as number) > 65535) return undefined;
  const refs: EgressRefs = {
    server,
    host: v.host,
    port: v.port as number,
    allowed: v.allowed,
    reason: v.reason,
    ...(Number.isInteger(v.status) && (v.status as number) >= 100 && (v.status as number) <= 599
      ? { status: v.status as number }
      : {}),
  };
  return { type: 'mcp.egress', refs };
}
