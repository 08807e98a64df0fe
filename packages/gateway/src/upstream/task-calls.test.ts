import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { UpstreamClient } from './mcp-client.js';

/**
 * A 2025-11-25 server (the v1 SDK's own task support) whose tool `needs-task` runs only as a
 * task: a plain call is refused by the server. `finishMs` undefined: the task never ends by itself.
 */
async function taskServer(finishMs: number | undefined) {
  const store = new InMemoryTaskStore();
  const server = new McpServer(
    { name: 'fixture', version: '1' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
    },
  );
  const created: string[] = [];
  server.experimental.tasks.registerToolTask(
    'needs-task',
    { execution: { taskSupport: 'required' } },
    {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 20 });
        created.push(task.taskId);
        if (finishMs !== undefined)
          setTimeout(
            () =>
              extra.taskStore
                .storeTaskResult(task.taskId, 'completed', {
                  content: [{ type: 'text', text: 'done by task' }],
                })
                .catch(() => {}),
            finishMs,
          );
        return { task };
      },
      getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new UpstreamClient('fixture', undefined, DEFAULT_CALL_LIMITS);
  await client.connect(clientSide);
  opened.push({ client, server });
  return { client, store, created };
}

const opened: { client: UpstreamClient; server: McpServer }[] = [];
afterEach(async () => {
  for (const { client, server } of opened.splice(0)) {
    await client.close().catch(() => {});
    await server.close().catch(() => {});
  }
});

describe('UpstreamClient: a tool that requires a task (MCP 2025-11-25)', () => {
  it('is called through a task of the server: created, waited on, answered as the plain call', async () => {
    const { client, created } = await taskServer(30);
    const answer = await client.callTool('needs-task', {}, { viaTask: true });
    expect(answer).toMatchObject({ content: [{ type: 'text', text: 'done by task' }] });
    // The server's related-task meta (naming its own id) does not come back.
    expect(JSON.stringify(answer)).not.toContain(created[0]!);
  });

  it('is refused by the server when called plainly (why the gateway calls it through a task)', async () => {
    const { client } = await taskServer(30);
    const answer = (await client
      .callTool('needs-task', {})
      .catch((e: Error) => ({ thrown: e.message }))) as Record<string, unknown>;
    expect(JSON.stringify(answer)).toMatch(/task/i);
    expect(answer.isError === true || 'thrown' in answer).toBe(true);
  });

  it("the caller's cancel reaches the server as tasks/cancel for its task", async () => {
    const { client, store, created } = await taskServer(undefined);
    const abort = new AbortController();
    const call = client.callTool('needs-task', {}, { viaTask: true, signal: abort.signal });
    await expect.poll(() => created.length).toBe(1);
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: 'CALL_CANCELLED' });
    await expect.poll(async () => (await store.getTask(created[0]!))?.status).toBe('cancelled');
  });
});
