import { type EgressDecisionLine, parseDecisionLine } from '@ringfence/egress-proxy/contract';
import type { AuditInput, EgressRefs } from './types.js';

export type EgressInput = Extract<AuditInput, { type: 'mcp.egress' }>;

/**
 * The `mcp.egress` entry for one decision of `server`'s sidecar. Only host, port, verdict,
 * reason and status are kept: never a path, a URL or the address the name resolved to.
 */
export function egressInputFromDecision(server: string, decision: EgressDecisionLine): EgressInput {
  const refs: EgressRefs = {
    server,
    host: decision.host,
    port: decision.port,
    allowed: decision.allowed,
    reason: decision.reason,
    ...(decision.status !== undefined ? { status: decision.status } : {}),
  };
  return { type: 'mcp.egress', refs };
}

/**
 * Turns one stdout line of `ringfence-egress-proxy` into an `mcp.egress` entry for `server`, or
 * `undefined` for anything that is not a decision (the line format and its defensive reading
 * are the proxy's contract: `parseDecisionLine`, docs/egress-proxy.md "Log lines").
 */
export function egressInputFromProxyLine(server: string, line: string): EgressInput | undefined {
  const decision = parseDecisionLine(line);
  return decision && egressInputFromDecision(server, decision);
}
