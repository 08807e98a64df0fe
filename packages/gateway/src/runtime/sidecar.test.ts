import { PassThrough } from 'node:stream';
import { parseSidecarArgv } from '@ringfence/egress-proxy/contract';
import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig, EgressRule } from '../config/servers.js';
import { sidecarCommand, waitForListening } from './sidecar.js';
import { StderrTail } from './stderr-tail.js';

const server = (egress: EgressRule): ContainerServerConfig => ({
  name: 's',
  transport: 'container',
  image: 'example/s:1',
  image_id: `sha256:${'b'.repeat(64)}`,
  egress,
});

const LISTENING = '{"ts":"2026-11-29T23:01:12.050Z","event":"listening","address":"0.0.0.0","port":3128}\n';

/** Settles to 'ready', or to the rejection's message, or 'pending' after `ms`. */
async function outcome(promise: Promise<void>, ms = 100): Promise<string> {
  return Promise.race([
    promise.then(
      () => 'ready',
      (e: Error) => e.message,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);
}

describe('sidecarCommand', () => {
  it('is the command line the sidecar has always had, and the proxy parses it', () => {
    const config = server({
      mode: 'allow',
      hosts: ['api.example.com', '*.example.org:8443'],
      addresses: ['10.20.0.0/16'],
    });
    const argv = sidecarCommand(config);
    expect(argv).toEqual([
      '--listen',
      '0.0.0.0:3128',
      '--lifeline',
      '--allow',
      'api.example.com',
      '--allow',
      '*.example.org:8443',
      '--allow-address',
      '10.20.0.0/16',
    ]);
    expect(parseSidecarArgv(argv)).toMatchObject({
      listen: { host: '0.0.0.0', port: 3128 },
      lifeline: true,
      allow: ['api.example.com', '*.example.org:8443'],
      allowAddresses: ['10.20.0.0/16'],
    });
  });

  it.each([
    [{ mode: 'allow', hosts: ['10.0.0.1'] }, 'EGRESS_BAD_ALLOW_ENTRY'],
    [{ mode: 'allow', hosts: ['a.test'], addresses: ['999.1.1.1/99'] }, 'EGRESS_BAD_CIDR'],
    [{ mode: 'allow', hosts: [] }, 'EGRESS_USAGE'],
  ] as const)('refuses %j before any container exists, with the proxy’s code', (egress, code) => {
    expect(() => sidecarCommand(server(egress as EgressRule))).toThrow(expect.objectContaining({ code }));
  });
});

describe('waitForListening', () => {
  it('resolves on the readiness line, even split across chunks', async () => {
    const stderr = new PassThrough();
    const ready = waitForListening(stderr, new StderrTail([]), 5_000);
    stderr.write(LISTENING.slice(0, 20));
    expect(await outcome(ready, 50)).toBe('pending');
    stderr.write(LISTENING.slice(20));
    expect(await outcome(ready)).toBe('ready');
  });

  it('is not fooled by the word in another line', async () => {
    const stderr = new PassThrough();
    const tail = new StderrTail([]);
    const ready = waitForListening(stderr, tail, 5_000);
    stderr.write('{"event":"internal-error","message":"\\"listening\\""}\n');
    stderr.write('ringfence-egress-proxy: "listening" on a bad day\n');
    expect(await outcome(ready)).toBe('pending');
    stderr.end();
    const message = await outcome(ready);
    expect(message).toMatch(/^the egress sidecar exited: /);
    expect(message).toContain('on a bad day');
    expect(tail.text()).toContain('internal-error');
  });

  it('rejects with what stderr said when the proxy exits first', async () => {
    const stderr = new PassThrough();
    const ready = waitForListening(stderr, new StderrTail([]), 5_000);
    stderr.end('ringfence-egress-proxy: --allow "10.0.0.1": IP addresses cannot be allowed by name\n');
    expect(await outcome(ready)).toContain(
      'the egress sidecar exited: ringfence-egress-proxy: --allow "10.0.0.1"',
    );
  });

  it('rejects after the timeout, saying there was no output', async () => {
    const ready = waitForListening(new PassThrough(), new StderrTail([]), 30);
    expect(await outcome(ready, 1_000)).toBe('the egress sidecar did not start listening: no output');
  });
});
