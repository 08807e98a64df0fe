import { mkdtemp, open, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileLease, withFileLock } from './lock.js';

// Two FileLease objects in one process are two holders as far as the lock file is concerned (each
// takes it with its own owner nonce through the file system), so the cross-process protocol is
// exercised here without child processes.

afterEach(() => {
  vi.restoreAllMocks();
});

describe('FileLease', () => {
  it('keeps one lock file across runs while busy, and removes it at close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-lease-'));
    const path = join(dir, 'audit.jsonl');
    const lease = new FileLease(path, { lingerMs: 60_000 });
    const owners = new Set<string>();
    for (let i = 0; i < 20; i++) {
      await lease.run(async () => {
        owners.add((await readFile(`${path}.lock`, 'utf8')).split('\n')[0]!);
      });
    }
    // One owner line for all 20 runs: the lock was taken once, not per run.
    expect(owners.size).toBe(1);
    await lease.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it('lets the lock go after lingering idle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-lease-'));
    const path = join(dir, 'x');
    const lease = new FileLease(path, { lingerMs: 10 });
    await lease.run(() => {});
    // Another holder gets it without asking, once the holder has been idle for lingerMs.
    expect(await withFileLock(path, () => 'other', { timeoutMs: 5_000 })).toBe('other');
    await lease.close();
  });

  it('hands over to a waiter that asks, at the end of its current run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-lease-'));
    const path = join(dir, 'x');
    const busy = new FileLease(path, { lingerMs: 600_000 });
    await busy.run(() => {});
    const order: string[] = [];
    // The busy holder would keep the lock for ten minutes; the waiter gets it after one more run.
    const waiter = withFileLock(path, () => order.push('waiter'), { timeoutMs: 5_000 });
    let stop = false;
    void waiter.finally(() => {
      stop = true;
    });
    let runs = 0;
    while (!stop && runs < 500) {
      await busy.run(() => order.push('busy'));
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await waiter;
    expect(order).toContain('waiter');
    // Both went on taking turns: the busy holder resumes after the waiter.
    await busy.run(() => order.push('busy-again'));
    expect(order.at(-1)).toBe('busy-again');
    await busy.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it('serialises runs in one process and keeps going after a run throws', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-lease-'));
    const lease = new FileLease(join(dir, 'x'));
    const order: string[] = [];
    const hold = (name: string, ms: number) =>
      lease.run(async () => {
        order.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name}-`);
      });
    await Promise.all([hold('a', 30), hold('b', 5)]);
    expect(order.join(' ')).toBe('a+ a- b+ b-');
    await expect(lease.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lease.run(() => 'still works')).toBe('still works');
    await lease.close();
  });
});

describe('a lock whose owner cannot be written (disk full)', () => {
  it('is removed at once, so the next try does not wait out the stale window', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-enospc-'));
    const path = join(dir, 'state.json');
    // No small tmpfs can be mounted here, so ENOSPC is injected at the file layer: the lock file
    // is created (O_EXCL succeeds on a full disk: no data block yet) and writing its owner fails.
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    vi.spyOn(proto, 'write').mockRejectedValueOnce(enospc);
    await expect(withFileLock(path, () => 'never')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect((await readdir(dir)).filter((f) => f.endsWith('.lock'))).toEqual([]);
    // The disk is "freed": the next holder gets the lock at once (a leftover would cost staleMs).
    expect(await withFileLock(path, () => 'got it', { timeoutMs: 500, staleMs: 60_000 })).toBe('got it');
  });
});
