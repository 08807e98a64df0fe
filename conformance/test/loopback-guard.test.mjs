// The guard preloaded into the suite: nothing but loopback may be reached. Each way out is tried
// in a child process whose network is a recording stub (test/guard/stub-network.mjs), so what the
// guard lets through is seen and none of it leaves this machine.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { connectTarget, isLoopbackHost } from '../lib/loopback-guard.mjs';
import { GUARD, locateSuite } from '../lib/suite.mjs';

const run = promisify(execFile);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const STUB = pathToFileURL(here('guard/stub-network.mjs')).href;
const ATTEMPTS = here('guard/attempts.mjs');
const WAYS_OUT = [
  'net',
  'fetch',
  'httpName',
  'lookup',
  'lookupPromise',
  'resolve4',
  'resolverResolve4',
  'resolve4Promise',
  'udp',
];

describe('isLoopbackHost / connectTarget', () => {
  it('accepts loopback literals and localhost only', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '[::1]',
      'localhost',
      'LOCALHOST',
      '::ffff:127.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '192.0.2.1',
      'example.com',
      'localhost.example.com',
      '128.0.0.1',
      undefined,
    ]) {
      expect(isLoopbackHost(host), String(host)).toBe(false);
    }
  });

  it("reads each of net's argument forms", () => {
    expect(connectTarget([{ host: '192.0.2.1', port: 80 }])).toEqual({ host: '192.0.2.1', port: 80 });
    expect(connectTarget([[{ port: 80 }, () => {}]])).toEqual({ host: 'localhost', port: 80 });
    expect(connectTarget([80, '192.0.2.1'])).toEqual({ host: '192.0.2.1', port: 80 });
    expect(connectTarget(['/run/x.sock'])).toEqual({ path: '/run/x.sock' });
    expect(connectTarget([{ path: '/run/x.sock' }])).toEqual({ path: '/run/x.sock' });
    // What node:http's agent hands net: a host and path null, which is no local socket.
    expect(connectTarget([[{ host: 'example.invalid', port: 80, path: null }, () => {}]])).toEqual({
      host: 'example.invalid',
      port: 80,
    });
  });
});

describe('the guard in a process', () => {
  const dirs = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function attempt(node, { guard }) {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-guard-'));
    dirs.push(dir);
    const log = join(dir, 'guard.log');
    const args = ['--import', STUB, ...(guard ? ['--import', pathToFileURL(GUARD).href] : []), ATTEMPTS];
    const { stdout } = await run(node, args, { env: { PATH: process.env.PATH, CONFORMANCE_GUARD_LOG: log } });
    let logged = [];
    try {
      logged = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {}
    return { ...JSON.parse(stdout), logged };
  }

  it('without the guard, the stub sees every way out (so the guarded run below can fail)', async () => {
    const result = await attempt(process.execPath, { guard: false });
    expect(result.reached).toEqual(
      expect.arrayContaining(['connect 192.0.2.1', 'lookup example.invalid', 'resolve4 example.invalid']),
    );
    expect(result.outcomes.udp).toBe('went through');
  });

  const nodes = [['Node 20 (this one)', process.execPath]];
  try {
    nodes.push(["Node 22 (the suite's)", locateSuite().node]);
  } catch {
    // Not installed here (npm run conformance:install): the suite's own Node is covered by CI's run.
  }
  for (const [label, node] of nodes) {
    it(`refuses every way out but loopback, and logs each refusal, on ${label}`, async () => {
      const result = await attempt(node, { guard: true });
      for (const way of WAYS_OUT) {
        expect(result.outcomes[way], way).toMatch(
          /conformance loopback guard: refused .*loopback addresses only/,
        );
      }
      expect(result.reached.filter((r) => !/ (127\.0\.0\.1|localhost)$/.test(r))).toEqual([]);
      expect(result.local).toBe('local');
      expect(result.localhost).toBe('local');
      expect(result.logged.length).toBeGreaterThanOrEqual(WAYS_OUT.length);
      expect(result.logged.every((line) => line.startsWith('conformance loopback guard: refused'))).toBe(
        true,
      );
    });
  }
});
