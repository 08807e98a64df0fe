import { describe, expect, it } from 'vitest';
import { egressInputFromDecision, egressInputFromProxyLine } from './egress.js';

const decision = {
  ts: '2026-11-29T23:01:12.050Z',
  event: 'egress',
  method: 'CONNECT',
  host: 'api.github.com',
  port: 443,
  allowed: true,
  reason: 'allowed',
  address: '140.82.121.6',
  status: 200,
};

describe('egress audit entries', () => {
  it('keep host, port, verdict, reason and status; never the method or the address', () => {
    expect(egressInputFromProxyLine('github', JSON.stringify(decision))).toEqual({
      type: 'mcp.egress',
      refs: {
        server: 'github',
        host: 'api.github.com',
        port: 443,
        allowed: true,
        reason: 'allowed',
        status: 200,
      },
    });
    expect(
      egressInputFromDecision('s', {
        event: 'egress',
        host: 'h',
        port: 0,
        allowed: false,
        reason: 'malformed-request',
      }),
    ).toEqual({
      type: 'mcp.egress',
      refs: { server: 's', host: 'h', port: 0, allowed: false, reason: 'malformed-request' },
    });
  });

  it('a status outside 100-599 is left out, the decision kept', () => {
    const input = egressInputFromProxyLine('s', JSON.stringify({ ...decision, status: 700 }));
    expect(input?.refs).not.toHaveProperty('status');
    expect(input?.refs).toMatchObject({ host: 'api.github.com', allowed: true });
  });

  it.each([
    ['a close line', '{"event":"close","host":"a","port":1,"bytes_in":0,"bytes_out":0,"duration_ms":1}'],
    ['not JSON', 'not json'],
    ['an array', JSON.stringify([decision])],
    ['a port out of range', JSON.stringify({ ...decision, port: 70000 })],
    ['allowed as a string', JSON.stringify({ ...decision, allowed: 'true' })],
    ['a huge line', JSON.stringify({ ...decision, reason: 'x'.repeat(64 * 1024) })],
    [
      'fields only under __proto__',
      `{"event":"egress","__proto__":${JSON.stringify({ ...decision, event: undefined })}}`,
    ],
  ])('%s gives no entry', (_label, line) => {
    expect(egressInputFromProxyLine('s', line)).toBeUndefined();
  });
});
