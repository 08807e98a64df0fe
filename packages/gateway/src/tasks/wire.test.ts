import { describe, expect, it } from 'vitest';
import type { TaskSnapshot } from './types.js';
import {
  created2025,
  created2026,
  detailed2026,
  listedForClient,
  needsTasksExtension,
  RELATED_TASK_META,
  requestedTask,
  requestedTaskId,
  result2025,
  taskSupportOf,
} from './wire.js';

const task = (over: Partial<TaskSnapshot> = {}): TaskSnapshot => ({
  id: 'rf-abc',
  status: 'working',
  createdAt: '2026-12-01T00:00:00.000Z',
  lastUpdatedAt: '2026-12-01T00:00:01.000Z',
  ttlMs: 600_000,
  pollIntervalMs: 1000,
  ...over,
});
const ERROR_REPLY = { content: [{ type: 'text', text: 'no' }], isError: true };

describe('task wire forms', () => {
  it('2025: the CreateTaskResult names ttl and pollInterval', () => {
    expect(created2025(task())).toEqual({
      task: {
        taskId: 'rf-abc',
        status: 'working',
        createdAt: '2026-12-01T00:00:00.000Z',
        lastUpdatedAt: '2026-12-01T00:00:01.000Z',
        ttl: 600_000,
        pollInterval: 1000,
      },
    });
  });

  it('2025: tasks/result is the reply with the related-task _meta, other _meta kept', () => {
    expect(result2025('rf-abc', { content: [], _meta: { a: 1 } })).toEqual({
      content: [],
      _meta: { a: 1, [RELATED_TASK_META]: { taskId: 'rf-abc' } },
    });
  });

  it('2026: creation is flat with ttlMs and pollIntervalMs and no result', () => {
    expect(created2026(task())).toEqual({
      resultType: 'task',
      taskId: 'rf-abc',
      status: 'working',
      createdAt: '2026-12-01T00:00:00.000Z',
      lastUpdatedAt: '2026-12-01T00:00:01.000Z',
      ttlMs: 600_000,
      pollIntervalMs: 1000,
    });
  });

  it("2026: a tool's error result is a completed task with the result inlined, without related-task meta", () => {
    const detailed = detailed2026(task({ status: 'failed' }), {
      ...ERROR_REPLY,
      _meta: { [RELATED_TASK_META]: { taskId: 'x' } },
    });
    expect(detailed).toMatchObject({ resultType: 'complete', status: 'completed', result: ERROR_REPLY });
    expect((detailed.result as Record<string, unknown>)._meta).toBeUndefined();
    expect(detailed2026(task(), undefined)).not.toHaveProperty('result');
    expect(detailed2026(task({ status: 'cancelled' }), undefined)).toMatchObject({ status: 'cancelled' });
  });

  it('reads the 2025 task hint and task ids defensively', () => {
    expect(requestedTask({ name: 'x' })).toBeUndefined();
    expect(requestedTask({ task: {} })).toEqual({});
    expect(requestedTask({ task: { ttl: 5000 } })).toEqual({ ttlMs: 5000 });
    expect(requestedTask({ task: { ttl: -1 } })).toEqual({});
    expect(requestedTask({ task: 'yes' })).toBeUndefined();
    expect(requestedTaskId({ taskId: 'rf-1' })).toBe('rf-1');
    expect(requestedTaskId({ taskId: { $ne: null } })).toBe('');
    expect(requestedTaskId(undefined)).toBe('');
  });

  it('shows a required tool as optional to a client with tasks and drops taskSupport for one without', () => {
    const required = { name: 't', execution: { taskSupport: 'required' } };
    expect(taskSupportOf(required)).toBe('required');
    expect(taskSupportOf({ name: 't' })).toBe('forbidden');
    expect(taskSupportOf({ execution: { taskSupport: 'sometimes' } })).toBe('forbidden');
    expect(listedForClient(required, true)).toEqual({ name: 't', execution: { taskSupport: 'optional' } });
    expect(listedForClient(required, false)).toEqual({ name: 't' });
    expect(listedForClient({ name: 't', execution: { taskSupport: 'optional', other: 1 } }, false)).toEqual({
      name: 't',
      execution: { other: 1 },
    });
    const plain = { name: 'p' };
    expect(listedForClient(plain, false)).toBe(plain);
  });

  it('recognises a server error asking for the tasks extension, and nothing else', () => {
    const ext = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    expect(needsTasksExtension({ code: -32021, data: ext })).toBe(true);
    expect(needsTasksExtension({ code: -32021, data: { requiredCapabilities: { sampling: {} } } })).toBe(
      false,
    );
    expect(needsTasksExtension({ code: -32602, data: ext })).toBe(false);
    expect(needsTasksExtension({ code: -32021 })).toBe(false);
    expect(needsTasksExtension('boom')).toBe(false);
  });
});
