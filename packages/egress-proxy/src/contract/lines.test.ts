import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLE, openTunnel, waitFor } from '../__fixtures__/harness.js';
import {
  buildSidecarArgv,
  type EgressDecision,
  formatCloseLine,
  formatDecisionLine,
  formatListeningLine,
  isListeningLine,
  MAX_DECISION_LINE,
  parseDecisionLine,
  parseListeningLine,
} from './index.js';

const TS = '2026-11-29T23:01:12.050Z';
const decision: EgressDecision = {
  method: 'CONNECT',
  host: 'api.github.com',
  port: 443,
  allowed: true,
  reason: 'allowed',
  address: '140.82.121.6',
  status: 200,
};
const valid = {
  ts: TS,
  event: 'egress',
  method: 'GET',
  host: 'evil.test',
  port: 80,
  allowed: false,
  reason: 'not-allowlisted',
  status: 403,
};
const line = (change: Record<string, unknown>) => JSON.stringify({ ...valid, ...change });

describe('decision lines', () => {
  it('reads back exactly what the proxy writes, hostile strings included', () => {
    expect(parseDecisionLine(formatDecisionLine(decision, TS))).toEqual({
      event: 'egress',
      ts: TS,
      ...decision,
    });
    const hostile = { ...decision, method: 'GE"T\n', host: 'a"b\\c\u2028}{', address: undefined };
    const text = formatDecisionLine(hostile, TS);
    expect(text.endsWith('\n') && !text.slice(0, -1).includes('\n')).toBe(true);
    const { address: _omitted, ...rest } = hostile;
    expect(parseDecisionLine(text)).toEqual({ event: 'egress', ts: TS, ...rest });
  });

  it('the documented example line parses', () => {
    const doc =
      '{"ts":"2026-11-29T23:01:12.066Z","event":"egress","method":"GET","host":"evil.test","port":80,"allowed":false,"reason":"not-allowlisted","status":403}';
    expect(parseDecisionLine(doc)).toEqual({ ...valid, ts: '2026-11-29T23:01:12.066Z' });
  });

  it('close lines are not decisions', () => {
    const close = formatCloseLine(
      { host: 'api.github.com', port: 443, bytes_in: 5120, bytes_out: 830, duration_ms: 2070 },
      TS,
    );
    expect(JSON.parse(close)).toEqual({
      ts: TS,
      event: 'close',
      host: 'api.github.com',
      port: 443,
      bytes_in: 5120,
      bytes_out: 830,
      duration_ms: 2070,
    });
    expect(parseDecisionLine(close)).toBeUndefined();
  });

  it.each([
    ['blank', ''],
    ['not JSON', 'not json'],
    ['truncated JSON', line({}).slice(0, -1)],
    ['a JSON string', '"egress"'],
    ['a JSON number', '403'],
    ['null', 'null'],
    ['an array', JSON.stringify([valid])],
    ['another event', line({ event: 'listening' })],
    ['no event', JSON.stringify({ ...valid, event: undefined })],
    ['a host that is not a string', line({ host: 7 })],
    ['a missing host', JSON.stringify({ ...valid, host: undefined })],
    ['allowed as a string', line({ allowed: 'false' })],
    ['allowed as a number', line({ allowed: 0 })],
    ['a reason that is not a string', line({ reason: null })],
    ['the port as a string', line({ port: '80' })],
    ['a port past 65535', line({ port: 65536 })],
    ['a negative port', line({ port: -1 })],
    ['a fractional port', line({ port: 80.5 })],
    ['a huge port', '{"event":"egress","host":"a","port":1e400,"allowed":false,"reason":"x"}'],
    [
      'fields only on the prototype',
      '{"__proto__":{"host":"a","port":1,"allowed":true,"reason":"x"},"event":"egress"}',
    ],
    ['a huge line', line({ reason: 'x'.repeat(MAX_DECISION_LINE) })],
    ['a deeply nested line', `${'['.repeat(8000)}${']'.repeat(8000)}`],
    ['a deeply nested object', `{"event":"egress","host":${'['.repeat(5000)}${']'.repeat(5000)}}`],
  ])('ignores %s', (_label, text) => {
    expect(parseDecisionLine(text)).toBeUndefined();
  });

  it('reads only the contract fields, and a __proto__ key is data, never a prototype', () => {
    const text =
      '{"__proto__":{"polluted":true,"status":200},"constructor":{"prototype":{"polluted":true}},' +
      '"event":"egress","host":"a","port":0,"allowed":false,"reason":"x","extra":"dropped","url":"/secret"}';
    const parsed = parseDecisionLine(text);
    expect(parsed).toEqual({ event: 'egress', host: 'a', port: 0, allowed: false, reason: 'x' });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops a status outside 100-599 and fields of the wrong type, but keeps the decision', () => {
    for (const status of [99, 600, 200.5, '200', null]) {
      expect(parseDecisionLine(line({ status }))).toEqual({ ...valid, status: undefined });
      expect(parseDecisionLine(line({ status }))).not.toHaveProperty('status');
    }
    const parsed = parseDecisionLine(line({ method: 5, address: ['1.2.3.4'], ts: 1 }));
    expect(parsed).not.toHaveProperty('method');
    expect(parsed).not.toHaveProperty('address');
    expect(parsed).not.toHaveProperty('ts');
    expect(parsed).toMatchObject({ host: 'evil.test', port: 80, allowed: false, status: 403 });
  });

  it('a line just under the limit is read, one just over is not', () => {
    const pad = (n: number) => {
      const base = line({ reason: '' });
      return line({ reason: 'r'.repeat(n - base.length) });
    };
    expect(pad(MAX_DECISION_LINE)).toHaveLength(MAX_DECISION_LINE);
    expect(parseDecisionLine(pad(MAX_DECISION_LINE))?.reason).toHaveLength(
      MAX_DECISION_LINE - line({ reason: '' }).length,
    );
    expect(parseDecisionLine(pad(MAX_DECISION_LINE + 1))).toBeUndefined();
  });
});

describe('the listening line', () => {
  it('round-trips and is told apart from every other line', () => {
    const text = formatListeningLine({ address: '0.0.0.0', port: 3128 }, TS);
    expect(text).toBe(`{"ts":"${TS}","event":"listening","address":"0.0.0.0","port":3128}\n`);
    expect(parseListeningLine(text)).toEqual({ address: '0.0.0.0', port: 3128 });
    expect(isListeningLine(text)).toBe(true);
    expect(isListeningLine(text.trimEnd())).toBe(true);
  });

  it.each([
    '{"event":"stopping","reason":"listening"}',
    '{"event":"internal-error","message":"\\"listening\\""}',
    'ringfence-egress-proxy: "listening" is not a flag',
    '{"event":"listening"}',
    '{"event":"listening","address":"0.0.0.0","port":0}',
    '{"event":"listening","address":"0.0.0.0","port":"3128"}',
    '{"event":"listening","address":1,"port":3128}',
    '["listening"]',
    '{"__proto__":{"event":"listening","address":"a","port":1}}',
    '',
  ])('%j is not the listening line', (text) => {
    expect(isListeningLine(text)).toBe(false);
  });
});

describe('the real proxy speaks the contract', () => {
  let proc: ChildProcess | undefined;
  afterEach(async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc?.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    proc = undefined;
  });

  it('starts from a built argv, says it is listening, and writes decisions the parser reads', async () => {
    const argv = buildSidecarArgv({
      listen: { host: '127.0.0.1', port: 0 },
      allow: ['ok.test'],
      allowAddresses: ['127.0.0.0/8'],
      lifeline: true,
    });
    // No name is looked up in this test; the discard port makes sure nothing real is asked.
    proc = spawn(process.execPath, [BUNDLE, ...argv, '--dns-server', '127.0.0.1:9'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    const stdout: string[] = [];
    createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
    createInterface({ input: proc.stdout! }).on('line', (l) => stdout.push(l));
    const listening = await waitFor(
      () => stderr.map(parseListeningLine).find((l) => l !== undefined),
      15_000,
      'the listening line',
    );
    expect(listening.address).toBe('127.0.0.1');
    const refused = await openTunnel(listening.port, 'evil.test:443');
    refused.client.close();
    expect(refused.status).toBe(403);
    const literal = await openTunnel(listening.port, '127.0.0.1:443');
    literal.client.close();
    expect(literal.status).toBe(403);
    await waitFor(() => (stdout.length >= 2 ? true : undefined), 10_000, 'two decision lines');
    expect(stdout.map(parseDecisionLine)).toEqual([
      expect.objectContaining({
        event: 'egress',
        method: 'CONNECT',
        host: 'evil.test',
        port: 443,
        allowed: false,
        reason: 'not-allowlisted',
        status: 403,
      }),
      expect.objectContaining({
        host: '127.0.0.1',
        port: 443,
        allowed: false,
        reason: 'ip-literal',
        status: 403,
      }),
    ]);
  });
});
