import { describe, expect, it } from 'vitest';
import { DecisionLog } from './events.js';

describe('DecisionLog', () => {
  it('writes valid JSON with the contract fields in order, even for hostile strings', () => {
    const lines: string[] = [];
    const log = new DecisionLog((l) => lines.push(l));
    log.decision({
      method: 'GE"T\n',
      host: 'a"b\\c\u2028',
      port: 80,
      allowed: false,
      reason: 'x',
      status: 403,
    });
    log.decision({
      method: 'CONNECT',
      host: 'h',
      port: 443,
      allowed: true,
      reason: 'allowed',
      address: '::1',
      status: 200,
    });
    log.close({ host: 'h', port: 443, bytes_in: 1, bytes_out: 2, duration_ms: 3 });
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const [a, b, c] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a?.['method']).toBe('GE"T\n');
    expect(a?.['host']).toBe('a"b\\c\u2028');
    expect(Object.keys(a ?? {})).toEqual([
      'ts',
      'event',
      'method',
      'host',
      'port',
      'allowed',
      'reason',
      'status',
    ]);
    expect(Object.keys(b ?? {})).toEqual([
      'ts',
      'event',
      'method',
      'host',
      'port',
      'allowed',
      'reason',
      'address',
      'status',
    ]);
    expect(c).toMatchObject({ event: 'close', bytes_in: 1, bytes_out: 2, duration_ms: 3 });
  });
});
