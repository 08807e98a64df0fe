import type { Agent } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressPolicy } from '../address/policy.js';
import type { NameResolver } from '../dns/resolve.js';
import type { DecisionLog } from '../log/events.js';
import type { Allowlist } from '../matching/allowlist.js';

export interface ProxyLimits {
  readonly maxTunnels: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly headerTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly maxHeaderBytes: number;
  readonly maxHeaderCount: number;
}

/** Everything a request handler needs; one per running proxy. */
export interface ProxyContext {
  readonly allowlist: Allowlist;
  readonly resolver: NameResolver;
  readonly policy: AddressPolicy;
  readonly log: DecisionLog;
  readonly options: ProxyLimits;
  /** Open and pending tunnels, counted against `maxTunnels`. */
  readonly tunnels: Set<symbol>;
  readonly agent: Agent;
  /** Sockets of established tunnels, so stopping the proxy can end them (the HTTP server no
   * longer tracks a socket once it has been handed over by CONNECT). */
  readonly tunnelSockets: Set<Socket>;
  /** Every client connection the listener accepted and that is still open, so stopping the
   * proxy can end those still sending a head or waiting for a decision too. */
  readonly clientSockets: Set<Socket>;
  /** A stderr event for people (the sidecar's `say`); absent in-process unless given. */
  readonly notice?: (event: Record<string, unknown>) => void;
}
