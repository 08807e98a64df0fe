import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../ports/errors.js';
import { callThroughUpstreamTask, type UpstreamTaskRequests } from './upstream-task.js';
import { RELATED_TASK_META } from './wire.js';

function upstream(created: unknown, result: () => Promise<unknown>) {
  const sent: string[] = [];
  const requests: UpstreamTaskRequests = {
    create: async () => {
      sent.push('tools/call');
      return created;
    },
    result: async (id) => {
      sent.push(`tasks/result ${id}`);
      return result();
    },
    cancel: async (id) => {
      sent.push(`tasks/cancel ${id}`);
      return {};
    },
  };
  return { requests, sent };
}

describe('callThroughUpstreamTask', () => {
  it("answers as the plain call would, without the server's related-task meta", async () => {
    const { requests, sent } = upstream({ task: { taskId: 'up-1', status: 'working' } }, async () => ({
      content: [{ type: 'text', text: 'done' }],
      _meta: { [RELATED_TASK_META]: { taskId: 'up-1' }, other: true },
    }));
    const answer = await callThroughUpstreamTask('docs', requests, new AbortController().signal);
    expect(answer).toEqual({ content: [{ type: 'text', text: 'done' }], _meta: { other: true } });
    expect(sent).toEqual(['tools/call', 'tasks/result up-1']);
  });

  it("forwards the caller's cancel as tasks/cancel for the server's own id", async () => {
    const abort = new AbortController();
    const { requests, sent } = upstream(
      { task: { taskId: 'up-2' } },
      () =>
        new Promise((_, reject) =>
          abort.signal.addEventListener('abort', () => reject(new Error('cancelled'))),
        ),
    );
    const call = callThroughUpstreamTask('docs', requests, abort.signal);
    await new Promise((r) => setTimeout(r, 1));
    abort.abort();
    await expect(call).rejects.toThrow('cancelled');
    expect(sent).toEqual(['tools/call', 'tasks/result up-2', 'tasks/cancel up-2']);
  });

  it.each([
    ['no task', { content: [] }],
    ['a numeric id', { task: { taskId: 7 } }],
    ['an empty id', { task: { taskId: '' } }],
    ['an id too long to keep', { task: { taskId: 'x'.repeat(257) } }],
  ])('refuses a creation answer with %s as malformed', async (_, created) => {
    const { requests, sent } = upstream(created, async () => ({}));
    const error = await callThroughUpstreamTask('docs', requests, new AbortController().signal).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('UPSTREAM_MALFORMED');
    expect(sent).toEqual(['tools/call']);
  });
});
