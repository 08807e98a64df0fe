import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { sampleInput } from './__fixtures__/sample.js';
import { AuditLog } from './log.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-timings-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

it('times each write (write and fdatasync, and fdatasync alone) with the entries it made durable, and counts a failure', async () => {
  const written: [number, number, number][] = [];
  let failed = 0;
  const log = await AuditLog.open({
    path: join(dir, 'audit.jsonl'),
    session: 's',
    lockLingerMs: 60_000,
    timings: {
      written: (all, sync, entries) => written.push([all, sync, entries]),
      failed: () => (failed += 1),
    },
  });
  // Queued together: one group commit.
  await Promise.all([log.append(sampleInput(0)), log.append(sampleInput(1)), log.append(sampleInput(2))]);
  expect(written.map(([, , entries]) => entries).reduce((a, b) => a + b, 0)).toBe(3);
  for (const [all, sync] of written) {
    expect(sync).toBeGreaterThan(0);
    expect(all).toBeGreaterThanOrEqual(sync);
  }
  vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
    throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
  });
  await expect(log.append(sampleInput(3))).rejects.toMatchObject({ code: 'AUDIT_WRITE_FAILED' });
  expect(failed).toBe(1);
  await log.close();
});
