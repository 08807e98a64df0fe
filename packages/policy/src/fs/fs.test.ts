import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForChildProcesses, removeChildProcessBuild } from '../testing/build.js';
import { writeFileAtomic } from './atomic.js';
import { withFileLock } from './lock.js';

let built: string;
beforeAll(async () => {
  built = await buildForChildProcesses();
}, 120_000);
afterAll(removeChildProcessBuild);

function run(
  script: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('writeFileAtomic', () => {
  it('writes 0600 files in a 0700 directory it creates, and leaves no temp files', async () => {
    const base = await mkdtemp(join(tmpdir(), 'rf-atomic-'));
    const path = join(base, 'home', 'state.json');
    await writeFileAtomic(path, 'one');
    await writeFileAtomic(path, 'two');
    expect(await readFile(path, 'utf8')).toBe('two');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(base, 'home'))).mode & 0o777).toBe(0o700);
    expect(await readdir(join(base, 'home'))).toEqual(['state.json']);
    await writeFileAtomic(path, 'three', { mode: 0o644 });
    expect((await stat(path)).mode & 0o777).toBe(0o644);
  });
});

describe('withFileLock', () => {
  it('two real processes doing read-modify-write under the lock lose no update', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-lock-'));
    const script = `
      const { updatePolicyState } = await import(process.argv[1]);
      const [home, who, start] = process.argv.slice(2);
      await new Promise((r) => setTimeout(r, Number(start) - Date.now()));
      for (let i = 0; i < 40; i++) {
        await updatePolicyState(home, async (state) => {
          // Widen the window between read and write, as the unlocked control below does.
          await new Promise((r) => setTimeout(r, 2));
          state.policies[who + '-' + i] = { version: i + 1, digest: 'sha256:' + who, seen_at: 'x' };
          return { state, result: undefined };
        });
      }`;
    const start = String(Date.now() + 1500);
    const results = await Promise.all([
      run(script, built, dir, 'a', start),
      run(script, built, dir, 'b', start),
    ]);
    for (const r of results) expect(r.stderr).toBe('');
    const state = JSON.parse(await readFile(join(dir, 'policy-state.json'), 'utf8')) as { policies: object };
    expect(Object.keys(state.policies)).toHaveLength(80);
    expect((await stat(join(dir, 'policy-state.json'))).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['policy-state.json']);
  }, 60_000);

  it('the same read-modify-write without the lock does lose updates (the test above can fail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-nolock-'));
    const path = join(dir, 'counter.json');
    await writeFile(path, '{"n":0}');
    const script = `
      const { writeFileAtomic } = await import(process.argv[1]);
      const { readFile } = await import('node:fs/promises');
      const path = process.argv[2];
      // Start together so the two loops really overlap.
      await new Promise((r) => setTimeout(r, Number(process.argv[3]) - Date.now()));
      for (let i = 0; i < 100; i++) {
        const n = JSON.parse(await readFile(path, 'utf8')).n;
        await new Promise((r) => setTimeout(r, 2));
        await writeFileAtomic(path, JSON.stringify({ n: n + 1 }));
      }`;
    const start = String(Date.now() + 1500);
    await Promise.all([run(script, built, path, start), run(script, built, path, start)]);
    const { n } = JSON.parse(await readFile(path, 'utf8')) as { n: number };
    expect(n).toBeLessThan(200);
  }, 60_000);

  it('recovers a lock left by a process that died', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-stale-'));
    const path = join(dir, 'state.json');
    const dead = await run('console.log(process.pid)');
    const deadPid = Number(dead.stdout.trim());
    await writeFile(`${path}.lock`, JSON.stringify({ pid: deadPid, nonce: 'dead' }));
    expect(await withFileLock(path, () => 'got it', { timeoutMs: 2000 })).toBe('got it');
    expect(await readdir(dir)).toEqual([]);
  });

  it('recovers an empty lock file once it is old, and waits while it is fresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-empty-'));
    const path = join(dir, 'state.json');
    await writeFile(`${path}.lock`, '');
    await expect(withFileLock(path, () => 1, { timeoutMs: 100, staleMs: 60_000 })).rejects.toMatchObject({
      code: 'LOCK_TIMEOUT',
    });
    expect(await withFileLock(path, () => 2, { timeoutMs: 2000, staleMs: 0 })).toBe(2);
  });

  it('times out while a live process holds the lock, naming the lock file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-held-'));
    const path = join(dir, 'state.json');
    await writeFile(`${path}.lock`, JSON.stringify({ pid: process.pid, nonce: 'mine' }));
    await expect(withFileLock(path, () => 1, { timeoutMs: 150 })).rejects.toThrow(`${path}.lock`);
  });

  it('serialises holders in one process and releases on error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-serial-'));
    const path = join(dir, 'x');
    const order: string[] = [];
    const hold = (name: string, ms: number) =>
      withFileLock(path, async () => {
        order.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name}-`);
      });
    await Promise.all([hold('a', 50), hold('b', 10)]);
    expect(order.join(' ')).toMatch(/^(a\+ a- b\+ b-|b\+ b- a\+ a-)$/);
    await expect(withFileLock(path, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await withFileLock(path, () => 'free again', { timeoutMs: 200 })).toBe('free again');
  });
});
