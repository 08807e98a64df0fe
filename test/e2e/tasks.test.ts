// Tasks through `mcp serve` (stdio), with the v1 SDK's client against a real 2025-11-25 server on
// loopback (test/fixtures/task-server.mjs) whose tool runs only as a task: usable by a client
// without tasks (the gateway drives the server's task) and by one with tasks (a gateway task of
// its own, decided and audited at creation, its result audited when fetched).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome } from '../helpers/mcp.js';
import { startWithReadyLine, stopAll } from '../helpers/processes.js';

afterAll(stopAll);

async function registered() {
  const home = await freshHome();
  const { ready } = await startWithReadyLine<{ port: number }>(process.execPath, [
    new URL('../fixtures/task-server.mjs', import.meta.url).pathname,
  ]);
  const added = await ringfence(['mcp', 'add', 'jobs', '--url', `http://127.0.0.1:${ready.port}/mcp`], {
    RINGFENCE_HOME: home,
  });
  expect(added.code, added.stderr).toBe(0);
  return home;
}

async function audit(home: string) {
  const text = await readFile(join(home, 'audit.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map(
      (line) =>
        JSON.parse(line) as { type: string; seq: number; parent_seq?: number; refs: Record<string, unknown> },
    );
}

describe('a tool that requires a task, through mcp serve', () => {
  it('a client without tasks sees no execution and calls it plainly: the gateway drives the server task', async () => {
    const home = await registered();
    const served = await connectStdio(home);
    try {
      const tool = (await served.client.listTools()).tools.find((t) => t.name === 'jobs_needs-task');
      expect(tool, served.stderr()).toBeDefined();
      expect(tool!.execution).toBeUndefined();
      const result = await served.client.callTool({ name: 'jobs_needs-task', arguments: {} });
      expect(firstText(result)).toBe('done by task');
    } finally {
      await served.close();
    }
  });

  it('a client with tasks gets a gateway task: decided at creation, its result audited when fetched', async () => {
    const home = await registered();
    const served = await connectStdio(home, {}, { tasks: {} });
    try {
      const tool = (await served.client.listTools()).tools.find((t) => t.name === 'jobs_needs-task');
      expect(tool!.execution).toEqual({ taskSupport: 'optional' });
      const created = await served.client.request(
        { method: 'tools/call', params: { name: 'jobs_needs-task', arguments: {}, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      expect(id).toMatch(/^rf-/);
      const result = await served.client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(firstText(result)).toBe('done by task');
      expect((await served.client.experimental.tasks.getTask(id)).status).toBe('completed');
    } finally {
      await served.close();
    }
    const entries = (await audit(home)).filter((e) => e.refs.task !== undefined);
    expect(entries.map((e) => [e.type, e.refs.tool])).toEqual([
      ['mcp.decision', 'needs-task'],
      ['mcp.result', 'needs-task'],
    ]);
    expect(entries[1]!.parent_seq).toBe(entries[0]!.seq);
    const verify = await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
