import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '../ports/caller.js';
import { TaskError } from './errors.js';
import { type TaskEvent, TaskRegistry } from './registry.js';
import type { Settled, TaskWork } from './types.js';

const ALICE = { agent: 'alice', scope: 'work' };
const MALLORY = { agent: 'mallory', scope: 'work' };
const SUBJECT = { server: 'docs', tool: 'search' };

/** Work whose upstream answer the test decides, recording what the registry asked of it. */
function work(options: { check?: (s: Settled) => CallToolResult } = {}) {
  let finish!: (value: unknown) => void;
  let fail!: (error: unknown) => void;
  const seen = {
    signal: undefined as AbortSignal | undefined,
    checks: 0,
    records: 0,
    abandoned: [] as string[],
  };
  const task: TaskWork = {
    run: (signal) => {
      seen.signal = signal;
      return new Promise((resolve, reject) => {
        finish = resolve;
        fail = reject;
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      });
    },
    check: async (settled) => {
      seen.checks++;
      const reply =
        options.check?.(settled) ??
        (settled.ok
          ? { content: [{ type: 'text', text: String(settled.value) }] }
          : { content: [{ type: 'text', text: 'failed upstream' }], isError: true });
      return { reply, record: async () => void seen.records++ };
    },
    abandon: async (why) => void seen.abandoned.push(why),
  };
  return { task, seen, finish: (v: unknown) => finish(v), fail: (e: unknown) => fail(e) };
}

const registry = (events: TaskEvent[] = [], now?: () => number, limits = {}) =>
  new TaskRegistry({ onEvent: async (e) => void events.push(e), limits, ...(now ? { now } : {}) });

describe('TaskRegistry', () => {
  it('runs the decided work, checks it once when it settles and writes its result entry on the first fetch only', async () => {
    const tasks = registry();
    const w = work();
    const created = tasks.reserve(ALICE).start(w.task, SUBJECT);
    expect(created.status).toBe('working');
    expect(created.id).toMatch(/^rf-[A-Za-z0-9_-]{24}$/);
    w.finish('42');
    const first = await tasks.result(ALICE, created.id);
    const again = await tasks.result(ALICE, created.id);
    expect(first).toEqual({ content: [{ type: 'text', text: '42' }] });
    expect(again).toBe(first);
    expect(w.seen.checks).toBe(1);
    expect(w.seen.records).toBe(1);
    expect((await tasks.get(ALICE, created.id)).status).toBe('completed');
  });

  it('writes no result entry while the result is only polled for (get is not a fetch)', async () => {
    const tasks = registry();
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    w.finish('x');
    await new Promise((r) => setTimeout(r, 5));
    expect((await tasks.get(ALICE, id)).status).toBe('completed');
    expect(w.seen.records).toBe(0);
    const inlined = await tasks.fetchIfDone(ALICE, id);
    expect(inlined.reply).toEqual({ content: [{ type: 'text', text: 'x' }] });
    expect(w.seen.records).toBe(1);
  });

  it("a tool's error result makes the task failed (the 2025 reading)", async () => {
    const tasks = registry();
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    w.fail(new Error('boom'));
    expect((await tasks.result(ALICE, id)).isError).toBe(true);
    expect((await tasks.get(ALICE, id)).status).toBe('failed');
  });

  it('answers another principal exactly as an unknown id, for get, result and cancel, and reports each attempt', async () => {
    const events: TaskEvent[] = [];
    const tasks = registry(events);
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    const answers: string[] = [];
    for (const attempt of [
      () => tasks.get(MALLORY, id),
      () => tasks.result(MALLORY, id),
      () => tasks.cancel(MALLORY, id),
      () => tasks.get({ agent: 'alice', scope: 'other' }, id),
      () => tasks.get({}, id),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TaskError);
      expect((error as TaskError).code).toBe('TASK_NOT_FOUND');
      answers.push((error as Error).message);
    }
    const unknown = (await tasks.get(MALLORY, 'rf-doesnotexist').catch((e: Error) => e.message)) as string;
    // The same words as for an unknown id, but for the id itself.
    expect(new Set(answers.map((a) => a.replace(id, 'ID'))).size).toBe(1);
    expect(answers[0]!.replace(id, 'ID')).toBe(unknown.replace('rf-doesnotexist', 'ID'));
    expect(events.map((e) => [e.kind, 'op' in e ? e.op : '', e.owner.agent])).toEqual([
      ['not-found', 'get', 'mallory'],
      ['not-found', 'result', 'mallory'],
      ['not-found', 'cancel', 'mallory'],
      ['not-found', 'get', 'alice'],
      ['not-found', 'get', undefined],
      ['not-found', 'get', 'mallory'],
    ]);
    // Nothing of the attempts touched the task.
    expect(w.seen.signal?.aborted).toBe(false);
    expect(tasks.list(MALLORY)).toEqual([]);
    expect(tasks.list(ALICE).map((t) => t.id)).toEqual([id]);
  });

  it('cancel aborts the upstream work, closes its decision once and says it ended; a second cancel is refused', async () => {
    const events: TaskEvent[] = [];
    const tasks = registry(events);
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    const cancelled = await tasks.cancel(ALICE, id);
    expect(cancelled.status).toBe('cancelled');
    expect(w.seen.signal?.aborted).toBe(true);
    expect(w.seen.abandoned).toEqual(['cancelled']);
    expect(events).toEqual([{ kind: 'cancelled', owner: ALICE, id, ...SUBJECT }]);
    const again = await tasks.cancel(ALICE, id).catch((e: TaskError) => e);
    expect((again as TaskError).code).toBe('TASK_TERMINAL');
    const result = await tasks.result(ALICE, id).catch((e: TaskError) => e);
    expect((result as TaskError).code).toBe('TASK_CANCELLED');
    expect(w.seen.checks).toBe(0);
    expect(w.seen.records).toBe(0);
  });

  it('a result fetch that gives up does not end the task', async () => {
    const tasks = registry();
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    const giveUp = new AbortController();
    const waiting = tasks.result(ALICE, id, giveUp.signal);
    giveUp.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    w.finish('later');
    expect((await tasks.result(ALICE, id)).content).toEqual([{ type: 'text', text: 'later' }]);
  });

  it('bounds live tasks per owner and overall, counting reservations; a released slot is free again', () => {
    const tasks = registry([], undefined, { perOwner: 2, total: 3 });
    const a1 = tasks.reserve(ALICE);
    tasks.reserve(ALICE).start(work().task, SUBJECT);
    expect(() => tasks.reserve(ALICE)).toThrow(/you have 2 tasks already/);
    tasks.reserve(MALLORY);
    expect(() => tasks.reserve({ agent: 'bob' })).toThrow(/the gateway holds 3 tasks already/);
    a1.release();
    expect(() => tasks.reserve({ agent: 'bob' })).not.toThrow();
  });

  it('drops a task after its ttl: the running work is cancelled and its decision closed as expired', async () => {
    let now = 1_000_000;
    const tasks = registry([], () => now, { maxTtlMs: 5_000 });
    const running = work();
    const { id, ttlMs } = tasks.reserve(ALICE).start(running.task, SUBJECT, 60_000);
    expect(ttlMs).toBe(5_000);
    now += 5_000;
    const error = await tasks.get(ALICE, id).catch((e: TaskError) => e);
    expect((error as TaskError).code).toBe('TASK_NOT_FOUND');
    expect(running.seen.signal?.aborted).toBe(true);
    expect(running.seen.abandoned).toEqual(['expired']);
  });

  it('a result fetched before expiry is not abandoned when it expires', async () => {
    let now = 0;
    const tasks = registry([], () => now, { defaultTtlMs: 1_000 });
    const w = work();
    const { id } = tasks.reserve(ALICE).start(w.task, SUBJECT);
    w.finish('ok');
    await tasks.result(ALICE, id);
    now = 2_000;
    expect(tasks.list(ALICE)).toEqual([]);
    expect(w.seen.abandoned).toEqual([]);
    expect(w.seen.records).toBe(1);
  });

  it('a reservation starts one task only', () => {
    const tasks = registry();
    const slot = tasks.reserve(ALICE);
    slot.start(work().task, SUBJECT);
    expect(() => slot.start(work().task, SUBJECT)).toThrow(/used twice/);
  });

  it('treats a non-string id as unknown', async () => {
    const tasks = registry();
    const error = await tasks.get(ALICE, 42 as unknown as string).catch((e: TaskError) => e);
    expect((error as TaskError).code).toBe('TASK_NOT_FOUND');
  });
});
