import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { EraVerdict } from '../config/eras.js';
import type { HttpServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import { connectInEra, type EraMemory } from './era.js';
import type { UpstreamClient } from './mcp-client.js';

const config: HttpServerConfig = { name: 's', transport: 'http', url: 'https://s.example/mcp' };
const connected = (kind: 'modern' | 'legacy') =>
  ({
    verdict: () => (kind === 'modern' ? { kind, discover: { supportedVersions: ['2026-07-28'] } } : { kind }),
  }) as unknown as UpstreamClient;
const legacyKept: EraVerdict = { era: 'legacy', registration: 'x', checked_at: new Date().toISOString() };

function memory(kept?: EraVerdict) {
  const log: string[] = [];
  const eras: EraMemory = {
    recall: async () => kept,
    remember: async (_c, verdict) => void log.push(`remember ${verdict.era}`),
    forget: async () => void log.push('forget'),
  };
  return { eras, log };
}
/** What our upstreams throw: the SDK's error as the cause of a start refusal. */
const wrapped = (cause: Error) =>
  new UpstreamError('UPSTREAM_CONNECT', `cannot connect: ${cause.message}`, { cause });

describe('connectInEra', () => {
  it('a registration pinned to 2025 (mcp add --protocol 2025) connects in 2025: no probe, no verdict read or kept', async () => {
    const modernKept: EraVerdict = {
      era: 'modern',
      discover: { supportedVersions: ['2026-07-28', '2025-11-25'] },
      registration: 'x',
      checked_at: new Date().toISOString(),
    };
    const { eras, log } = memory(modernKept);
    const priors: unknown[] = [];
    const client = await connectInEra({ ...config, protocol: '2025' }, eras, async (prior) => {
      priors.push(prior);
      return connected('legacy');
    });
    expect(priors).toEqual([{ kind: 'legacy' }]);
    expect(log).toEqual([]);
    expect(client.verdict().kind).toBe('legacy');
  });

  it('an outage with a kept verdict is not a reason to forget it, nor to try again', async () => {
    const { eras, log } = memory(legacyKept);
    const priors: unknown[] = [];
    const lost = wrapped(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    await expect(
      connectInEra(config, eras, async (prior) => {
        priors.push(prior);
        throw lost;
      }),
    ).rejects.toBe(lost);
    expect(priors).toEqual([{ kind: 'legacy' }]);
    expect(log).toEqual([]);
  });

  it('a kept verdict the server refuses is forgotten and the server probed again', async () => {
    const { eras, log } = memory(legacyKept);
    const priors: unknown[] = [];
    const client = await connectInEra(config, eras, async (prior) => {
      priors.push(prior);
      if (prior) throw wrapped(new ProtocolError(-32022, 'Unsupported protocol version'));
      return connected('modern');
    });
    expect(priors).toEqual([{ kind: 'legacy' }, undefined]);
    expect(log).toEqual(['forget', 'remember modern']);
    expect(client.verdict().kind).toBe('modern');
  });

  it('a credential refusal is no evidence of an era: the verdict is kept and the refusal passed on', async () => {
    const { eras, log } = memory(legacyKept);
    const refused = wrapped(
      new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, 'HTTP 401', { status: 401 }),
    );
    await expect(connectInEra(config, eras, async () => Promise.reject(refused))).rejects.toBe(refused);
    expect(log).toEqual([]);
  });

  it('a probe the server closed on is tried once in 2025; an unreachable server is not', async () => {
    const closed = memory();
    const priors: unknown[] = [];
    await connectInEra(config, closed.eras, async (prior) => {
      priors.push(prior);
      if (!prior) throw wrapped(new SdkError(SdkErrorCode.EraNegotiationFailed, 'closed during the probe'));
      return connected('legacy');
    });
    expect(priors).toEqual([undefined, { kind: 'legacy' }]);
    expect(closed.log).toEqual(['remember legacy']);

    const down = memory();
    let attempts = 0;
    const unreachable = wrapped(
      new SdkError(SdkErrorCode.EraNegotiationFailed, 'probe failed', undefined, {
        cause: new UpstreamError('UPSTREAM_LOST', 'the server could not be reached (ECONNREFUSED)'),
      }),
    );
    await expect(
      connectInEra(config, down.eras, async () => {
        attempts++;
        throw unreachable;
      }),
    ).rejects.toBe(unreachable);
    expect(attempts).toBe(1);
  });
});
