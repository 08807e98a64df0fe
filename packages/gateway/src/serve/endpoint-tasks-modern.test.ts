// Tasks for MCP 2026-07-28 clients over `mcp serve --http` (the extension io.modelcontextprotocol/tasks):
// the gateway decides which call runs as a task, for a client that declared the extension on that
// request; the task is its agent's alone. Hand-written requests: the SDK 2.4.0 client cannot take
// a task answer (it drops the handle), so these speak the wire as the extension defines it.
import { afterEach, describe, expect, it } from 'vitest';
import type { CallOptions } from '../ports/upstream.js';
import { EverythingUpstream, type Line, policyOf, startGateway } from './__fixtures__/methods-harness.js';
import { serveHttp } from './http.js';

const MODERN = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

/** `long` may run as a task (its pinned definition says so), `quick` may not, `secret` is denied. */
class LongServer extends EverythingUpstream {
  readonly calls: { name: string; options: CallOptions | undefined }[] = [];
  release: (value: unknown) => void = () => {};
  /** Answer `long` at once (a plain call waits for it). */
  prompt = false;
  override async listTools() {
    const tool = (name: string, support?: string) => ({
      name,
      inputSchema: { type: 'object' },
      ...(support ? { execution: { taskSupport: support } } : {}),
    });
    return {
      tools: [
        tool('long', 'optional'),
        tool('quick'),
        tool('secret', 'optional'),
        tool('approve', 'optional'),
      ],
      problems: [],
    };
  }
  override async callTool(name: string, _args: Record<string, unknown>, options?: CallOptions) {
    this.calls.push({ name, options });
    if (name !== 'long' || this.prompt) return { content: [{ type: 'text', text: `${name} done` }] };
    return new Promise((resolve, reject) => {
      this.release = resolve;
      options?.signal?.addEventListener('abort', () =>
        reject(new Error('AbortError: This operation was aborted')),
      );
    });
  }
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => {});
  cleanup = [];
});

async function start() {
  const s = new LongServer('s');
  const started = await startGateway(
    [s],
    policyOf([
      { id: 'no-secret', match: { tool: 'secret' }, action: 'deny' },
      { id: 'ask-first', match: { tool: 'approve' }, action: 'ask', reason: 'a person decides' },
    ]),
  );
  const served = await serveHttp(started.gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) =>
      t === 'alice-token' ? { agent: 'alice' } : t === 'bob-token' ? { agent: 'bob' } : undefined,
  });
  cleanup.push(
    started.done,
    () => started.gateway.close(),
    () => served.close(),
  );
  /** One 2026 request; `tasks` says whether this request's envelope declares the extension. */
  const post = async (
    method: string,
    params: Record<string, unknown>,
    options: { token?: string; tasks?: boolean; elicit?: boolean } = {},
  ): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> => {
    const name = (params.name ?? params.taskId) as string | undefined;
    const response = await fetch(served.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.token ?? 'alice-token'}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': method,
        ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {
              ...(options.tasks === false ? {} : { extensions: { [EXT]: {} } }),
              ...(options.elicit ? { elicitation: {} } : {}),
            },
          },
        },
      }),
    });
    const text = await response.text();
    // A JSON answer, or one SSE event carrying it.
    const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
    return JSON.parse(json);
  };
  return { s, post, ...started };
}

const taskLines = (lines: Line[]) => lines.filter((l) => l.refs.task !== undefined);

describe('tasks for a 2026 client (the extension)', () => {
  it('a long tool runs as a task: decided at creation, result inlined in tasks/get and audited when first fetched', async () => {
    const { s, post, lines } = await start();
    const discover = await post('server/discover', {});
    expect(discover.result).toMatchObject({ capabilities: { extensions: { [EXT]: {} } } });
    const created = await post('tools/call', { name: 's_long', arguments: {} });
    expect(created.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: expect.any(Number),
    });
    const taskId = created.result!.taskId as string;
    expect(taskId).toMatch(/^rf-/);
    expect((await post('tasks/get', { taskId })).result).toMatchObject({
      resultType: 'complete',
      status: 'working',
    });
    s.release({ content: [{ type: 'text', text: 'long done' }] });
    await expect.poll(async () => (await post('tasks/get', { taskId })).result?.status).toBe('completed');
    const done = (await post('tasks/get', { taskId })).result!;
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'long done' }] });
    const written = taskLines(await lines());
    expect(written.map((l) => [l.type, l.agent])).toEqual([
      ['mcp.decision', 'alice'],
      ['mcp.result', 'alice'],
    ]);
  });

  it('another agent gets an unknown-id error for get, update and cancel; the owner is unaffected', async () => {
    const { s, post, allLines } = await start();
    const taskId = (await post('tools/call', { name: 's_long', arguments: {} })).result!.taskId as string;
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const answer = await post(method, { taskId, inputResponses: {} }, { token: 'bob-token' });
      expect(answer.error?.code, method).toBe(-32602);
      expect(answer.error?.message).toContain('you have no task');
    }
    expect(s.calls[0]!.options?.signal?.aborted).toBe(false);
    expect((await post('tasks/get', { taskId })).result?.status).toBe('working');
    const refused = (await allLines()).filter((l) => l.type === 'mcp.task');
    expect(refused.map((l) => [l.agent, l.refs.op, l.refs.allowed])).toEqual([
      ['bob', 'get', false],
      ['bob', 'update', false],
      ['bob', 'cancel', false],
    ]);
  });

  it('cancel is an idempotent ack that stops the upstream call', async () => {
    const { s, post } = await start();
    const taskId = (await post('tools/call', { name: 's_long', arguments: {} })).result!.taskId as string;
    await expect.poll(() => s.calls.length).toBe(1);
    expect((await post('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect(s.calls[0]!.options?.signal?.aborted).toBe(true);
    expect((await post('tasks/cancel', { taskId })).error).toBeUndefined();
    expect((await post('tasks/get', { taskId })).result?.status).toBe('cancelled');
  });

  it('no task without the extension on the request, for a tool not marked long, or for a denied tool', async () => {
    const { s, post } = await start();
    s.prompt = true;
    expect((await post('tools/call', { name: 's_quick', arguments: {} })).result).toMatchObject({
      content: [{ type: 'text', text: 'quick done' }],
    });
    const denied = (await post('tools/call', { name: 's_secret', arguments: {} })).result!;
    expect(denied.isError).toBe(true);
    expect(denied.resultType).not.toBe('task');
    const plain = await post('tools/call', { name: 's_long', arguments: {} }, { tasks: false });
    expect(plain.result?.resultType).not.toBe('task');
    const noExtension = await post('tasks/get', { taskId: 'rf-x' }, { tasks: false });
    expect(noExtension.error?.code).toBe(-32021);
    for (const method of ['tasks/result', 'tasks/list'])
      expect((await post(method, { taskId: 'rf-x' })).error?.code, method).toBe(-32601);
  });

  it('a rule that needs a person asks before any task exists; the approved retry creates the task', async () => {
    const { s, post, lines } = await start();
    const first = await post('tools/call', { name: 's_approve', arguments: {} }, { elicit: true });
    expect(first.result?.resultType, JSON.stringify(first)).toBe('input_required');
    expect(s.calls).toEqual([]);
    const retry = await post(
      'tools/call',
      {
        name: 's_approve',
        arguments: {},
        requestState: first.result!.requestState,
        inputResponses: { ringfence_approval: { action: 'accept', content: {} } },
      },
      { elicit: true },
    );
    expect(retry.result, JSON.stringify(retry)).toMatchObject({ resultType: 'task', status: 'working' });
    await expect
      .poll(async () => (await post('tasks/get', { taskId: retry.result!.taskId })).result?.status)
      .toBe('completed');
    expect(s.calls.map((c) => c.name)).toEqual(['approve']);
    // The question round wrote nothing; the approved call's decision names the task.
    const decisions = (await lines()).filter((l) => l.type === 'mcp.decision' && l.refs.tool === 'approve');
    expect(decisions.map((l) => [l.refs.allowed, l.refs.task])).toEqual([[true, retry.result!.taskId]]);
  });
});
