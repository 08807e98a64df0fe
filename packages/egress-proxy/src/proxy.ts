import { once } from 'node:events';
import { AddressPolicy } from './address/policy.js';
import { parseAllowEntry } from './contract/allow.js';
import { parseCidr } from './contract/cidr.js';
import { EgressProxyError } from './contract/errors.js';
import { parseResolvePins } from './contract/resolve-pins.js';
import { NameResolver } from './dns/resolve.js';
import type { ProxyContext, ProxyLimits } from './http/context.js';
import { createFrontServer } from './http/front.js';
import { createProxyServer, createUpstreamAgent } from './http/server.js';
import { DecisionLog, type LogSink, stdoutSink } from './log/events.js';
import { Allowlist } from './matching/allowlist.js';

export interface EgressProxyOptions {
  /** Listen address; port 0 picks a free port. */
  readonly host: string;
  readonly port: number;
  /** `--allow` entries: `HOST`, `HOST:PORT`, `*.DOMAIN`, `*.DOMAIN:PORT`. */
  readonly allow: readonly string[];
  /** `--allow-address` CIDRs exempted from the forbidden ranges. */
  readonly allowAddresses?: readonly string[];
  /** `--resolve` pins as `NAME=IP` strings; several pins for one name give several answers. */
  readonly resolve?: readonly string[];
  readonly maxTunnels?: number;
  readonly idleTimeoutSec?: number;
  readonly connectTimeoutMs?: number;
  readonly headerTimeoutMs?: number;
  readonly responseTimeoutMs?: number;
  readonly dnsServers?: readonly string[];
  readonly dnsTimeoutMs?: number;
  readonly dnsTries?: number;
  /** Where decision and close lines go; stdout by default. */
  readonly log?: LogSink;
  /** Events for the person reading the proxy's stderr (connections dropped over the bound). */
  readonly onNotice?: (event: Record<string, unknown>) => void;
}

export interface RunningEgressProxy {
  readonly address: string;
  readonly port: number;
  /** Stops accepting, ends open tunnels and resolves when the listener is closed. */
  close(): Promise<void>;
}

export const DEFAULTS = {
  maxTunnels: 1024,
  idleTimeoutSec: 300,
  connectTimeoutMs: 10_000,
  headerTimeoutMs: 15_000,
  responseTimeoutMs: 120_000,
  dnsTimeoutMs: 2_500,
  dnsTries: 2,
  maxHeaderBytes: 16 * 1024,
  maxHeaderCount: 100,
} as const;

/** Starts the proxy in this process. Validation errors throw {@link EgressProxyError}. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<RunningEgressProxy> {
  const limits: ProxyLimits = {
    maxTunnels: options.maxTunnels ?? DEFAULTS.maxTunnels,
    idleTimeoutMs: (options.idleTimeoutSec ?? DEFAULTS.idleTimeoutSec) * 1000,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    headerTimeoutMs: options.headerTimeoutMs ?? DEFAULTS.headerTimeoutMs,
    responseTimeoutMs: options.responseTimeoutMs ?? DEFAULTS.responseTimeoutMs,
    maxHeaderBytes: DEFAULTS.maxHeaderBytes,
    maxHeaderCount: DEFAULTS.maxHeaderCount,
  };
  const policy = new AddressPolicy((options.allowAddresses ?? []).map(parseCidr));
  const ctx: ProxyContext = {
    allowlist: new Allowlist(options.allow.map(parseAllowEntry)),
    resolver: new NameResolver({
      timeoutMs: options.dnsTimeoutMs ?? DEFAULTS.dnsTimeoutMs,
      tries: options.dnsTries ?? DEFAULTS.dnsTries,
      servers: options.dnsServers ?? [],
      pins: parseResolvePins(options.resolve ?? []),
    }),
    policy,
    log: new DecisionLog(options.log ?? stdoutSink()),
    options: limits,
    tunnels: new Set(),
    tunnelSockets: new Set(),
    clientSockets: new Set(),
    agent: createUpstreamAgent(limits.responseTimeoutMs, limits.maxTunnels),
    ...(options.onNotice ? { notice: options.onNotice } : {}),
  };
  const http = createProxyServer(ctx);
  const server = createFrontServer(ctx, http);
  server.listen({ host: options.host, port: options.port, exclusive: true });
  try {
    await once(server, 'listening');
  } catch (err) {
    throw new EgressProxyError(
      'EGRESS_LISTEN_FAILED',
      `cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`,
    );
  }
  const bound = server.address();
  if (bound === null || typeof bound === 'string') {
    throw new EgressProxyError('EGRESS_LISTEN_FAILED', 'the listener has no TCP address');
  }
  policy.setListening(bound.address, bound.port);
  // The HTTP server never listens itself (the front hands it connections with the documented
  // emit('connection')), but the deadline of a keep-alive connection's later heads
  // (headersTimeout) needs the connection tracking Node starts in a 'listening' listener of its
  // own, an internal detail (docs/egress-proxy.md, "The CONNECT head"). front.test.ts fails if that
  // ever stops (a second request trickled on a keep-alive connection must get 408); close() does
  // not rely on it, it destroys every client socket itself.
  http.emit('listening');
  return {
    address: bound.address,
    port: bound.port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      http.close();
      http.closeAllConnections();
      for (const socket of ctx.clientSockets) socket.destroy();
      for (const socket of ctx.tunnelSockets) socket.destroy();
      ctx.agent.destroy();
      await closed;
    },
  };
}
