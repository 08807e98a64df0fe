import { describe, expect, it } from 'vitest';
import { answerCapBytes, callLimitsOf, DEFAULT_CALL_LIMITS, limitsProblem } from './limits.js';
import { parseServersFile } from './servers.js';

const MIB = 1024 * 1024;
const remote = (extra: Record<string, unknown>) => ({
  version: 1,
  servers: [{ name: 'a', transport: 'http', url: 'https://mcp.example.com/mcp', ...extra }],
});

describe('call limits of a server entry', () => {
  it('defaults: 60 s without progress, 600 s in all, 6 MiB of result', () => {
    expect(callLimitsOf({})).toEqual({ idleMs: 60_000, ceilingMs: 600_000, maxResultBytes: 6 * MIB });
    expect(DEFAULT_CALL_LIMITS).toEqual(callLimitsOf({}));
  });

  it('takes what the entry says, and a long call timeout without a ceiling raises the ceiling', () => {
    expect(callLimitsOf({ timeouts: { call_seconds: 5, ceiling_seconds: 90 }, max_result_mb: 20 })).toEqual({
      idleMs: 5_000,
      ceilingMs: 90_000,
      maxResultBytes: 20 * MIB,
    });
    expect(callLimitsOf({ timeouts: { call_seconds: 900 } })).toMatchObject({
      idleMs: 900_000,
      ceilingMs: 900_000,
    });
    expect(callLimitsOf({ timeouts: { ceiling_seconds: 30 } })).toMatchObject({ ceilingMs: 30_000 });
  });

  it('the memory cap of one answer leaves room for base64 of a result at the cap, never below 16 MiB', () => {
    expect(answerCapBytes(6 * MIB)).toBe(16 * MIB);
    expect(answerCapBytes(32 * MIB)).toBeGreaterThan(Math.ceil((32 * MIB * 4) / 3));
  });

  it.each([
    [{ timeouts: { call_seconds: 0 } }, 'servers[0].timeouts.call_seconds must be a whole number of seconds'],
    [{ timeouts: { call_seconds: 1.5 } }, 'servers[0].timeouts.call_seconds must be a whole number'],
    [{ timeouts: { ceiling_seconds: 86_401 } }, 'servers[0].timeouts.ceiling_seconds must be a whole number'],
    [{ timeouts: { call_seconds: '60' } }, 'servers[0].timeouts.call_seconds must be a whole number'],
    [{ timeouts: { idle: 5 } }, 'servers[0].timeouts.idle is not a known field'],
    [{ timeouts: [] }, 'servers[0].timeouts must be an object'],
    [{ timeouts: { call_seconds: 120, ceiling_seconds: 60 } }, 'is below servers[0].timeouts.call_seconds'],
    [{ max_result_mb: 0 }, 'servers[0].max_result_mb must be a whole number of MiB from 1 to 32'],
    [{ max_result_mb: 33 }, 'servers[0].max_result_mb must be a whole number of MiB from 1 to 32'],
  ])('mcp-servers.json refuses %j', (extra, message) => {
    expect(() => parseServersFile(remote(extra))).toThrow(
      expect.objectContaining({ code: 'SERVER_FIELD', message: expect.stringContaining(message) }),
    );
  });

  it('mcp-servers.json keeps valid limits on either transport', () => {
    const limits = { timeouts: { call_seconds: 120, ceiling_seconds: 1800 }, max_result_mb: 12 };
    expect(parseServersFile(remote(limits)).servers[0]).toMatchObject(limits);
    const contained = {
      version: 1,
      servers: [
        {
          name: 'c',
          transport: 'container',
          image: 'x:1',
          image_id: `sha256:${'a'.repeat(64)}`,
          egress: { mode: 'deny' },
          ...limits,
        },
      ],
    };
    expect(parseServersFile(contained).servers[0]).toMatchObject(limits);
  });

  it('names the flags when asked to', () => {
    const flags = {
      timeouts: 'timeouts',
      call: '--call-timeout',
      ceiling: '--call-ceiling',
      maxResult: '--max-result-mb',
    };
    expect(limitsProblem({ timeouts: { call_seconds: 90, ceiling_seconds: 30 } }, flags)).toMatch(
      /^--call-ceiling \(30 s\) is below --call-timeout \(90 s\)/,
    );
    expect(limitsProblem({ max_result_mb: 40 }, flags)).toMatch(/^--max-result-mb must be/);
    expect(limitsProblem({}, flags)).toBeUndefined();
  });
});
