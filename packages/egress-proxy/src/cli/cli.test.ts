import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import { BUNDLE, startProxy, waitFor } from '../__fixtures__/harness.js';

let dns: TestDns;
beforeAll(async () => {
  dns = await new TestDns().start();
});
afterAll(() => dns?.stop());

function run(args: string[]) {
  return spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', timeout: 20_000, stdio: 'pipe' });
}

describe('command line', () => {
  it('--help prints usage on stdout and exits 0', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--listen HOST:PORT');
    expect(r.stdout).toContain('--allow-address CIDR');
  });

  it.each([
    [['--listen', '127.0.0.1:0', '--allow', 'ok.test', '--bogus'], 'unknown argument'],
    [['--allow', 'ok.test'], '--listen'],
    [['--listen', '127.0.0.1:0'], '--allow'],
    [['--listen', '127.0.0.1', '--allow', 'ok.test'], '--listen takes HOST:PORT'],
    [['--listen', '127.0.0.1:0', '--allow', '127.0.0.1'], 'IP addresses cannot be allowed'],
    [['--listen', '127.0.0.1:0', '--allow', 'ok.test:0'], 'port'],
    [['--listen', '127.0.0.1:0', '--allow', 'ok.test', '--allow-address', '10.0.0.0/33'], 'address range'],
    [['--listen', '127.0.0.1:0', '--allow', 'ok.test', '--resolve', 'ok.test=nope'], 'NAME=IP'],
    [['--listen', '127.0.0.1:0', '--allow', 'ok.test', '--max-tunnels', '0'], '--max-tunnels'],
  ])('usage error exits 2: %j', (args, message) => {
    const r = run(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('prints one listening line on stderr and nothing on stdout at startup', async () => {
    const p = await startProxy(['--dns-server', dns.server, '--allow', 'ok.test']);
    try {
      const startup = p.stderr().trim().split('\n');
      expect(startup).toHaveLength(1);
      const line = JSON.parse(startup[0] ?? '{}') as Record<string, unknown>;
      expect(line['event']).toBe('listening');
      expect(line['address']).toBe('127.0.0.1');
      expect(line['port']).toBe(p.port);
      expect(p.lines).toHaveLength(0);
    } finally {
      await p.stop();
    }
  });
});

describe('--lifeline', () => {
  it('exits when standard input ends', async () => {
    const p = await startProxy(['--dns-server', dns.server, '--allow', 'ok.test', '--lifeline']);
    const exited = new Promise<number | null>((resolve) => p.proc.once('exit', (code) => resolve(code)));
    await new Promise((r) => setTimeout(r, 200));
    expect(p.proc.exitCode).toBeNull();
    p.proc.stdin?.end();
    expect(await exited).toBe(0);
  });

  it('refuses to start when standard input is /dev/null, saying why', () => {
    const r = spawnSync(
      process.execPath,
      [BUNDLE, '--listen', '127.0.0.1:0', '--allow', 'ok.test', '--lifeline', '--dns-server', dns.server],
      { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--lifeline needs standard input');
    expect(r.stderr).not.toContain('listening');
  });

  it('refuses to start when standard input is closed', async () => {
    // A shell closes fd 0 (<&-) before exec'ing node.
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        `exec "$0" "$1" --listen 127.0.0.1:0 --allow ok.test --lifeline --dns-server ${dns.server} <&-`,
        process.execPath,
        BUNDLE,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(() => (err.length > 0 ? true : undefined), 5_000, 'stderr');
    expect(code).toBe(2);
    expect(err).toContain('--lifeline needs standard input');
  });
});
