import {
  type PriorDiscovery,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from '@modelcontextprotocol/client';
import type { EraVerdict } from '../config/eras.js';
import type { ServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import type { UpstreamClient } from './mcp-client.js';

/** Where the era verdicts are kept (`config/eras.ts` `EraStore`; absent: every start probes). */
export interface EraMemory {
  recall(config: ServerConfig): Promise<EraVerdict | undefined>;
  remember(
    config: ServerConfig,
    verdict: { era: 'legacy' } | { era: 'modern'; discover: Record<string, unknown> },
  ): Promise<void>;
  forget(name: string): Promise<void>;
  /** How a 2026 server's 2025 clients are served, once learnt (for `mcp ls` and the doctor). */
  noteLegacyClients?(config: ServerConfig, how: '2025' | '2026'): Promise<void>;
}

const priorOf = (verdict: EraVerdict): PriorDiscovery =>
  verdict.era === 'modern'
    ? {
        kind: 'modern',
        discover: verdict.discover as Extract<PriorDiscovery, { kind: 'modern' }>['discover'],
      }
    : { kind: 'legacy' };

/** The SDK's error, wherever it is in the cause chain of ours. */
function sdkCause(error: unknown): unknown {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++)
    if (at instanceof SdkError || at instanceof ProtocolError) return at;
  return undefined;
}

/**
 * The probe failed as such: the server closed on `server/discover` or answered it 5xx. Not when
 * the server could not be reached at all (the SDK says EraNegotiationFailed then too, with our
 * network error as its cause): trying again in 2025 would only wait for the same outage twice.
 */
const eraFailed = (error: unknown): boolean => {
  const cause = sdkCause(error);
  return (
    cause instanceof SdkError &&
    cause.code === SdkErrorCode.EraNegotiationFailed &&
    !(cause.cause instanceof UpstreamError)
  );
};

/**
 * The server answered, and refused: a JSON-RPC error, an HTTP status, or the era itself. Only
 * that is evidence a kept verdict went stale; silence or a dropped connection is an outage.
 */
export const answeredNo = (error: unknown): boolean => {
  const cause = sdkCause(error);
  if (cause instanceof ProtocolError || cause instanceof SdkHttpError) return !authRefused(error);
  return eraFailed(error);
};

/** A refusal for want of credentials is never evidence of an era. */
const authRefused = (error: unknown): boolean => {
  const cause = sdkCause(error);
  return (
    cause instanceof SdkError &&
    (cause.code === SdkErrorCode.ClientHttpAuthentication || cause.code === SdkErrorCode.ClientHttpForbidden)
  );
};

/**
 * Start a server in its era. `attempt` connects once (a container: a fresh container each time)
 * with the prior it is given.
 *  - A kept verdict connects without probing. If the server refuses that (a JSON-RPC error, an
 *    HTTP status other than a credential refusal, or no common era), the verdict is dropped and
 *    the server probed again; an outage is not a reason to forget what it speaks.
 *  - Without one the SDK probes. A probe that failed as such (the server closed on
 *    `server/discover`, the shape of servers that exit on any request before `initialize`, or
 *    answered it 5xx) is taken as a 2025 server and tried once with `initialize`.
 *  - What worked is kept for the next start.
 */
export async function connectInEra(
  config: ServerConfig,
  memory: EraMemory | undefined,
  attempt: (prior: PriorDiscovery | undefined) => Promise<UpstreamClient>,
): Promise<UpstreamClient> {
  // Pinned to 2025 at registration (`mcp add --protocol 2025`): no probe, no verdict kept. A server
  // that offers both eras keeps its 2025 behaviour then (requests in the middle of a call).
  if (config.protocol === '2025') return attempt({ kind: 'legacy' });
  // The verdicts are a cache: one that cannot be read means probing, never a refused start.
  const kept = await memory?.recall(config).catch(() => undefined);
  let client: UpstreamClient;
  let learnt = kept === undefined;
  try {
    client = await attempt(kept ? priorOf(kept) : undefined);
  } catch (error) {
    if (kept && answeredNo(error)) {
      await memory?.forget(config.name).catch(() => {});
      learnt = true;
      client = await reprobe(attempt);
    } else if (!kept && eraFailed(error)) {
      client = await attempt({ kind: 'legacy' });
    } else throw error;
  }
  if (learnt) {
    const verdict = client.verdict();
    await memory
      ?.remember(
        config,
        verdict.kind === 'modern'
          ? { era: 'modern', discover: verdict.discover as unknown as Record<string, unknown> }
          : { era: 'legacy' },
      )
      .catch(() => {});
  }
  return client;
}

async function reprobe(
  attempt: (prior: PriorDiscovery | undefined) => Promise<UpstreamClient>,
): Promise<UpstreamClient> {
  try {
    return await attempt(undefined);
  } catch (error) {
    if (eraFailed(error)) return attempt({ kind: 'legacy' });
    throw error;
  }
}
