import { describe, expect, it } from 'vitest';
import type { EgressInput } from '../audit/egress.js';
import { EgressAuditor } from './egress-audit.js';

const line = (host: string, allowed = false) =>
  JSON.stringify({
    ts: 'x',
    event: 'egress',
    method: 'CONNECT',
    host,
    port: 443,
    allowed,
    reason: allowed ? 'allowed' : 'not-allowlisted',
    status: allowed ? 200 : 403,
  });

describe('EgressAuditor', () => {
  it('writes the first attempt at once and folds repeats into one entry with a count', () => {
    const written: EgressInput[] = [];
    const auditor = new EgressAuditor((input) => written.push(input), 60_000);
    for (let i = 0; i < 5000; i++) auditor.line('s', line('evil.test'));
    auditor.line('s', line('ok.test', true));
    auditor.line('s', '{"event":"close","host":"ok.test"}');
    auditor.line('s', 'not json');
    expect(written.map((w) => [w.refs.host, w.refs.count])).toEqual([
      ['evil.test', undefined],
      ['ok.test', undefined],
    ]);
    auditor.flush();
    expect(written.map((w) => [w.refs.host, w.refs.count])).toEqual([
      ['evil.test', undefined],
      ['ok.test', undefined],
      ['evil.test', 4999],
    ]);
    auditor.line('s', line('evil.test'));
    expect(written).toHaveLength(4);
  });

  it('tells the observer every decision, the folded repeats too', () => {
    const seen: string[] = [];
    const auditor = new EgressAuditor(
      () => {},
      60_000,
      (server, allowed) => seen.push(`${server} ${allowed}`),
    );
    for (let i = 0; i < 3; i++) auditor.line('s', line('evil.test'));
    auditor.line('s', line('ok.test', true));
    auditor.line('s', 'not json');
    expect(seen).toEqual(['s false', 's false', 's false', 's true']);
    auditor.flush();
  });
});
