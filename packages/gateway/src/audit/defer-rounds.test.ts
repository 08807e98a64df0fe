import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { sampleInput } from './__fixtures__/sample.js';
import { AuditLog } from './log.js';
import { verifyAuditLog } from './verify.js';

// A result entry (deferred: nobody waits on it) that comes while a round is writing used to make a
// round of its own right after (a second write and fdatasync per call under load); it now waits
// for the next append, or DEFER_MS, as one that comes between rounds does.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-defer-'));
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

it('a deferred entry that comes during a round makes no round of its own: it rides with the next append', async () => {
  const realTimeout = globalThis.setTimeout;
  // Only the log's timers are faked (DEFER_MS, the lease's linger): its file I/O stays real.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const rounds: number[] = [];
  const path = join(dir, 'audit.jsonl');
  const log = await AuditLog.open({
    path,
    session: 's',
    timings: { written: (_all, _sync, entries) => rounds.push(entries), failed: () => {} },
  });
  const decision = log.append(sampleInput(0));
  // Queued while the decision's round runs, as a call's result under load.
  const result = log.append(sampleInput(1), { defer: true });
  expect(await decision).toBe(1);
  const state = await Promise.race([
    result.then(() => 'written'),
    new Promise((resolve) => realTimeout(() => resolve('waiting'), 300)),
  ]);
  expect(state).toBe('waiting');
  expect(rounds).toEqual([1]);
  // The next append takes it along, in its place in the order: one write, one fdatasync.
  expect(await log.append(sampleInput(2))).toBe(3);
  expect(await result).toBe(2);
  expect(rounds).toEqual([1, 2]);
  // Alone, it is written once DEFER_MS has passed.
  const alone = log.append(sampleInput(3), { defer: true });
  const later = log.append(sampleInput(4), { defer: true });
  await vi.advanceTimersByTimeAsync(50);
  expect(await alone).toBe(4);
  expect(await later).toBe(5);
  expect(rounds).toEqual([1, 2, 2]);
  await log.close();
  expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 5 });
});
