// The real reaper process (dist/runtime/reaper-main.js) against a fake engine on a unix socket: it
// says `ready` only when the engine answers its ping with 200, and once its gateway's pipe ends it
// loads dockerode itself (before its own delayed load) and asks the engine for what to remove.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startReaper } from './reaper.js';

const MAIN = fileURLToPath(new URL('../../dist/runtime/reaper-main.js', import.meta.url));
const owner = { session: 'sess-ping', pid: 4242, pidStart: '777', host: 'aaaaaaaaaaaaaaaa' };

let dir: string;
let engine: Server | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-reaper-ping-'));
});
afterEach(async () => {
  await new Promise((resolve) => (engine ? engine.close(resolve) : resolve(undefined)));
  engine = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** An engine on a unix socket that answers its ping with PING_STATUS and every list with []. */
async function fakeEngine(pingStatus: number) {
  const socket = join(dir, 'engine.sock');
  const asked: string[] = [];
  engine = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    const ping = /\/_ping$/.test(req.url?.split('?')[0] ?? '');
    res.writeHead(ping ? pingStatus : 200, { 'content-type': ping ? 'text/plain' : 'application/json' });
    res.end(ping ? 'OK' : '[]');
  });
  await new Promise<void>((resolve) => engine!.listen(socket, resolve));
  return { env: { ...process.env, DOCKER_HOST: `unix://${socket}` }, asked };
}

describe('the reaper process reaching its engine', () => {
  it('is not ready when the engine answers its ping with an error, and says so', async () => {
    const { env } = await fakeEngine(500);
    await expect(
      startReaper({ home: dir, owner, env, main: MAIN, onUnexpectedExit: () => {}, readyTimeoutMs: 20_000 }),
    ).rejects.toThrow(/exited \(code 1\)/);
  });

  it('is ready at a 200 ping, having asked the engine nothing else', async () => {
    const { env, asked } = await fakeEngine(200);
    const reaper = await startReaper({
      home: dir,
      owner,
      env,
      main: MAIN,
      onUnexpectedExit: () => {},
      readyTimeoutMs: 20_000,
    });
    expect(asked.filter((line) => line.includes('/_ping'))).toHaveLength(1);
    expect(asked.some((line) => line.includes('/containers/json'))).toBe(false);
    await reaper.stop();
  });
});

describe('the reaper process when its pipe ends', () => {
  it('lists what its gateway owns within the first pass, without waiting for its delayed load', async () => {
    const { env, asked } = await fakeEngine(200);
    const { spawn } = await import('node:child_process');
    const child = spawn(
      process.execPath,
      [
        MAIN,
        '--session',
        owner.session,
        '--pid',
        String(owner.pid),
        '--pid-start',
        owner.pidStart,
        '--host',
        owner.host,
      ],
      { stdio: ['pipe', 'pipe', 'ignore'], env },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      child.stdin!.end();
      await vi.waitFor(
        () =>
          expect(asked.some((line) => line.startsWith('GET') && line.includes('/containers/json'))).toBe(
            true,
          ),
        { timeout: 3_000, interval: 50 },
      );
      const filters = decodeURIComponent(asked.find((line) => line.includes('/containers/json'))!);
      expect(filters).toContain(`ringfence.session=${owner.session}`);
      expect(filters).toContain(`ringfence.pid=${owner.pid}`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
