import { Client as V2Client } from '@modelcontextprotocol/client';
import { ResultSchema } from '@modelcontextprotocol/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallOptions } from '../ports/upstream.js';
import { RELATED_TASK_META } from '../tasks/index.js';
import { EverythingUpstream, type Line, policyOf, startGateway } from './__fixtures__/methods-harness.js';
import { createEndpointServer } from './endpoint.js';
import type { Gateway } from './gateway.js';

/**
 * A server with a tool that answers when the test says (`slow`), one the policy denies (`secret`)
 * and one that requires a task (`needs-task`); it records each call with its options.
 */
class TaskUpstream extends EverythingUpstream {
  readonly calls: { name: string; options: CallOptions | undefined }[] = [];
  release: (value: unknown) => void = () => {};
  override async listTools() {
    return {
      tools: [
        { name: 'slow', inputSchema: { type: 'object' } },
        { name: 'secret', inputSchema: { type: 'object' } },
        { name: 'needs-task', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
      ],
      problems: [],
    };
  }
  override async callTool(name: string, _args: Record<string, unknown>, options?: CallOptions) {
    this.calls.push({ name, options });
    if (name !== 'slow') return { content: [{ type: 'text', text: `${name} done` }] };
    return new Promise((resolve, reject) => {
      this.release = resolve;
      options?.signal?.addEventListener('abort', () =>
        reject(new Error('AbortError: This operation was aborted')),
      );
    });
  }
}

const DENY_SECRET = policyOf([{ id: 'no-secret', match: { tool: 'secret' }, action: 'deny' }]);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanups.splice(0)) await done();
});

async function setup() {
  const upstream = new TaskUpstream('files');
  const started = await startGateway([upstream], DENY_SECRET);
  cleanups.push(async () => {
    await started.gateway.close();
    await started.done();
  });
  return { upstream, ...started };
}

/** A v1 SDK client (with or without the tasks capability) on a session of `identity`. */
async function v1Client(gateway: Gateway, identity: { agent?: string; scope?: string }, tasks = true) {
  const server = createEndpointServer(gateway, identity);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'v1', version: '1' }, { capabilities: tasks ? { tasks: {} } : {} });
  await client.connect(clientSide);
  cleanups.unshift(() => client.close());
  return client;
}

const create = (client: Client, name: string) =>
  client.request(
    { method: 'tools/call', params: { name: `files_${name}`, arguments: {}, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );

const taskLines = (lines: Line[]) => lines.filter((l) => l.refs.task !== undefined);

describe('tasks through the served endpoint (MCP 2025-11-25)', () => {
  it('a task-augmented call is decided and audited when created, its result audited when first fetched', async () => {
    const { gateway, upstream, lines, verify } = await setup();
    const alice = await v1Client(gateway, { agent: 'alice' });
    const created = await create(alice, 'slow');
    const id = created.task.taskId;
    expect(id).toMatch(/^rf-/);
    expect(created.task.status).toBe('working');
    expect((await alice.experimental.tasks.getTask(id)).status).toBe('working');
    upstream.release({ content: [{ type: 'text', text: 'slow done' }], _meta: { upstream: 'secret' } });
    await expect.poll(async () => (await alice.experimental.tasks.getTask(id)).status).toBe('completed');
    const result = await alice.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'slow done' }]);
    // Sanitised as a plain call's answer: the server's _meta does not pass, ours names the task.
    expect(result._meta).toEqual({ [RELATED_TASK_META]: { taskId: id } });
    await alice.experimental.tasks.getTaskResult(id, CallToolResultSchema);

    const written = taskLines(await lines());
    expect(written.map((l) => [l.type, l.refs.allowed ?? l.refs.is_error, l.agent])).toEqual([
      ['mcp.decision', true, 'alice'],
      ['mcp.result', false, 'alice'],
    ]);
    expect(written[1]!.parent_seq).toBe(written[0]!.seq);
    expect(written.every((l) => l.refs.task === id)).toBe(true);
    expect((await verify()).ok).toBe(true);
  });

  it('the result entry waits for the first fetch', async () => {
    const { gateway, upstream, lines } = await setup();
    const alice = await v1Client(gateway, { agent: 'alice' });
    const id = (await create(alice, 'slow')).task.taskId;
    upstream.release({ content: [] });
    await expect.poll(async () => (await alice.experimental.tasks.getTask(id)).status).toBe('completed');
    expect(taskLines(await lines()).map((l) => l.type)).toEqual(['mcp.decision']);
  });

  it('another agent cannot get, fetch, cancel or list a task: answered as an unknown id, and each attempt audited', async () => {
    const { gateway, upstream, allLines } = await setup();
    const alice = await v1Client(gateway, { agent: 'alice', scope: 'work' });
    const mallory = await v1Client(gateway, { agent: 'mallory', scope: 'work' });
    const id = (await create(alice, 'slow')).task.taskId;
    const refused = async (work: () => Promise<unknown>) => {
      const error = (await work().then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: number; message: string } | undefined;
      expect(error?.code).toBe(-32602);
      return error!.message;
    };
    const answers = [
      await refused(() => mallory.experimental.tasks.getTask(id)),
      await refused(() => mallory.experimental.tasks.getTaskResult(id, CallToolResultSchema)),
      await refused(() => mallory.experimental.tasks.cancelTask(id)),
    ];
    const unknown = await refused(() => mallory.experimental.tasks.getTask('rf-AAAAAAAAAAAAAAAAAAAAAAAA'));
    for (const answer of answers)
      expect(answer.replace(id, 'ID')).toBe(unknown.replace('rf-AAAAAAAAAAAAAAAAAAAAAAAA', 'ID'));
    expect((await mallory.experimental.tasks.listTasks()).tasks).toEqual([]);
    // Alice's task is untouched, and hers alone to list.
    expect(upstream.calls.at(-1)?.options?.signal?.aborted).toBe(false);
    expect((await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual([id]);
    const attempts = (await allLines()).filter((l) => l.type === 'mcp.task');
    expect(attempts.map((l) => [l.agent, l.refs.op, l.refs.allowed, l.refs.task])).toEqual([
      ['mallory', 'get', false, id],
      ['mallory', 'result', false, id],
      ['mallory', 'cancel', false, id],
      ['mallory', 'get', false, 'rf-AAAAAAAAAAAAAAAAAAAAAAAA'],
    ]);
  });

  it('a task-augmented call to a denied tool is refused before any task exists, and audited', async () => {
    const { gateway, upstream, lines } = await setup();
    const alice = await v1Client(gateway, { agent: 'alice' });
    const error = (await create(alice, 'secret').catch((e: unknown) => e)) as {
      code: number;
      message: string;
    };
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('ringfence refused');
    expect(error.message).toContain('no-secret');
    expect(upstream.calls).toEqual([]);
    expect((await alice.experimental.tasks.listTasks()).tasks).toEqual([]);
    const written = await lines();
    expect(written.map((l) => [l.type, l.refs.tool, l.refs.allowed, l.refs.task])).toEqual([
      ['mcp.decision', 'secret', false, undefined],
    ]);
  });

  it('tasks/cancel stops the upstream call and closes the decision with a cancelled result', async () => {
    const { gateway, upstream, lines } = await setup();
    const alice = await v1Client(gateway, { agent: 'alice' });
    const id = (await create(alice, 'slow')).task.taskId;
    await expect.poll(() => upstream.calls.length).toBe(1);
    const cancelled = await alice.experimental.tasks.cancelTask(id);
    expect(cancelled.status).toBe('cancelled');
    expect(upstream.calls[0]!.options?.signal?.aborted).toBe(true);
    const again = (await alice.experimental.tasks.cancelTask(id).catch((e: unknown) => e)) as {
      code: number;
    };
    expect(again.code).toBe(-32602);
    const written = taskLines(await lines());
    expect(written.map((l) => [l.type, l.refs.cancelled])).toEqual([
      ['mcp.decision', undefined],
      ['mcp.result', 'client'],
    ]);
  });

  it('a tool that requires a task: shown as optional to a client with tasks, without execution to one without, and usable by both', async () => {
    const { gateway, upstream } = await setup();
    const withTasks = await v1Client(gateway, { agent: 'a' });
    const without = await v1Client(gateway, { agent: 'b' }, false);
    const shown = (tools: { name: string; execution?: unknown }[]) =>
      tools.find((t) => t.name === 'files_needs-task')?.execution;
    expect(shown((await withTasks.listTools()).tools)).toEqual({ taskSupport: 'optional' });
    expect(shown((await without.listTools()).tools)).toBeUndefined();
    // A client without tasks calls it plainly: the gateway calls the server through a task of its own.
    const plain = await without.callTool({ name: 'files_needs-task', arguments: {} });
    expect(plain.content).toEqual([{ type: 'text', text: 'needs-task done' }]);
    expect(upstream.calls[0]?.options?.viaTask).toBe(true);
    // A client with tasks may ask for one.
    const id = (await create(withTasks, 'needs-task')).task.taskId;
    const result = await withTasks.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'needs-task done' }]);
    expect(upstream.calls[1]?.options?.viaTask).toBe(true);
  });

  it('a v2 SDK client (2025 era) drives the same tasks', async () => {
    const { gateway, upstream } = await setup();
    const server = createEndpointServer(gateway, { agent: 'v2' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new V2Client({ name: 'v2', version: '1' }, { capabilities: { tasks: {} } });
    await client.connect(clientSide as never);
    cleanups.unshift(() => client.close());
    const created = (await client.request(
      { method: 'tools/call', params: { name: 'files_slow', arguments: {}, task: { ttl: 5000 } } } as never,
      ResultSchema,
    )) as { task: { taskId: string } };
    const id = created.task.taskId;
    upstream.release({ content: [{ type: 'text', text: 'v2 done' }] });
    const result = (await client.request(
      { method: 'tasks/result', params: { taskId: id } } as never,
      ResultSchema,
    )) as { content: unknown };
    expect(result.content).toEqual([{ type: 'text', text: 'v2 done' }]);
    const got = (await client.request(
      { method: 'tasks/get', params: { taskId: id } } as never,
      ResultSchema,
    )) as {
      status: string;
    };
    expect(got.status).toBe('completed');
  });
});
