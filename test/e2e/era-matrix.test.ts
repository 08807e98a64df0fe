// The era matrix (issue 22, "Conformance in CI"): real SDK clients and servers of both MCP eras
// through a real `ringfence mcp serve`, crossed:
//   (a) a v1 SDK client (2025) over stdio → a v2 server that speaks only 2026-07-28, in its container
//   (b) a v2 SDK client pinned to 2026-07-28 over --http → v1 (2025) servers: on loopback
//       (long calls, tasks) and in a container (elicitation)
// Each cell: progress, cancellation reaching the server, elicitation and a 70 s call with progress
// (both 70 s calls run at once, started before the other checks); tasks where the server has them.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { askingImage, modernImage, removeTestContainers, uniqueName } from '../helpers/containers.js';
import {
  connectStdio,
  firstText,
  freshHome,
  type ServedClient,
  serveHttp,
  startLongCallServer,
} from '../helpers/mcp.js';
import { startWithReadyLine, stopAll } from '../helpers/processes.js';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const TOKEN = 'e2e-era-matrix-0123456789abcdef0123456789abcdef';
const ADA = { action: 'accept', content: { name: 'Ada' } } as const;
const LONG_CALL_MS = 150_000;

type Outcome = { ok: true; text: string; isError: boolean; progress: number } | { ok: false; error: string };

const add = async (home: string, args: string[]) => {
  const added = await ringfence(['mcp', 'add', ...args], { RINGFENCE_HOME: home });
  expect(added.code, added.stderr).toBe(0);
};

/** Cell (a): a 2025 client, declaring elicitation, before a 2026-only server allowed to elicit. */
async function legacyToModern() {
  const home = await freshHome();
  await add(home, ['modern', '--image', await modernImage(), '--allow-elicitation']);
  const served = await connectStdio(home, {}, { elicitation: {} });
  const asked: string[] = [];
  served.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(String(request.params.message));
    return ADA;
  });
  const seen = async () =>
    JSON.parse(firstText(await served.client.callTool({ name: 'modern_seen', arguments: {} }))) as {
      seen: string[];
      cancelled: string[];
    };
  return { home, served, asked, seen };
}

/** Cell (b): 2025 servers (long calls and tasks on loopback, an asker in a container) for 2026 clients. */
async function modernToLegacy() {
  const home = await freshHome();
  const record = join(home, '..', 'record.jsonl');
  await writeFile(record, '');
  const long = await startLongCallServer(record);
  const { ready } = await startWithReadyLine<{ port: number }>(process.execPath, [
    new URL('../fixtures/task-server.mjs', import.meta.url).pathname,
  ]);
  await add(home, ['long', '--url', long.url]);
  await add(home, ['jobs', '--url', `http://127.0.0.1:${ready.port}/mcp`]);
  await add(home, ['writer', '--image', await askingImage(), '--allow-elicitation']);
  const { url } = await serveHttp(home, TOKEN, ['--session', uniqueName('era-matrix')]);
  const clients: ModernClient[] = [];
  const asked: string[] = [];
  const connect = async () => {
    const client = new ModernClient(
      { name: 'e2e-era-matrix', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String((request.params as { message?: unknown }).message));
      return ADA;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    expect(client.getProtocolEra()).toBe('modern');
    clients.push(client);
    return client;
  };
  const recorded = async () =>
    (await readFile(record, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; tool: string; at: number });
  return { home, url, clients, asked, connect, recorded };
}

/**
 * A 2026 request as the tasks extension defines it, hand-written: the SDK 2.4.0 client drops a
 * task handle (it has no task runtime), so a client using tasks speaks the wire itself.
 */
async function modernPost(url: string, method: string, params: Record<string, unknown>) {
  // Mcp-Name carries the tool's name, or the task's id for tasks/*.
  const name = params.name ?? params.taskId;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
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
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-era-matrix-raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
  return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

const settle = (call: Promise<unknown>, progress: () => number) =>
  call.then(
    (answer): Outcome => {
      const result = answer as { isError?: boolean };
      return {
        ok: true,
        text: firstText(result as never),
        isError: result.isError === true,
        progress: progress(),
      };
    },
    (error: Error): Outcome => ({ ok: false, error: error.message }),
  );

let a: Awaited<ReturnType<typeof legacyToModern>>;
let b: Awaited<ReturnType<typeof modernToLegacy>>;
/** The two 70 s calls, started together once both cells are up. */
let longA: Promise<Outcome>;
let longB: Promise<Outcome>;

beforeAll(async () => {
  [a, b] = await Promise.all([legacyToModern(), modernToLegacy()]);
  let progressA = 0;
  // 280 steps of 250 ms: 70 s, with progress all along (the client's timer restarts on each).
  longA = settle(
    a.served.client.callTool({ name: 'modern_slow', arguments: { steps: 280 } }, undefined, {
      onprogress: () => {
        progressA += 1;
      },
      resetTimeoutOnProgress: true,
      timeout: LONG_CALL_MS,
    }),
    () => progressA,
  );
  let progressB = 0;
  const client = await b.connect();
  longB = settle(
    client.callTool(
      { name: 'long_slow', arguments: { seconds: 70, everyMs: 5000 } },
      {
        onprogress: () => {
          progressB += 1;
        },
        resetTimeoutOnProgress: true,
        timeout: LONG_CALL_MS,
      },
    ),
    () => progressB,
  );
}, 300_000);

afterAll(async () => {
  await (a?.served as ServedClient | undefined)?.close().catch(() => {});
  for (const client of b?.clients ?? []) await client.close().catch(() => {});
  await stopAll();
  await removeTestContainers();
});

describe('(a) a v1 (2025) client → mcp serve → a v2 server speaking only 2026-07-28', () => {
  it('relays progress', async () => {
    const progress: number[] = [];
    const result = await a.served.client.callTool(
      { name: 'modern_slow', arguments: { steps: 3 } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(firstText(result)).toBe('done after 3 steps');
    expect(progress.length).toBeGreaterThan(0);
  });

  it("passes the client's cancel on to the server", async () => {
    const abort = new AbortController();
    const call = a.served.client.callTool({ name: 'modern_sleep', arguments: {} }, undefined, {
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect
      .poll(async () => (await a.seen()).cancelled, { timeout: 10_000, interval: 300 })
      .toContain('sleep');
  });

  it("asks the client the server's input_required elicitation on its session and retries with the answer", async () => {
    const result = await a.served.client.callTool({ name: 'modern_ask', arguments: {} });
    expect(result.isError, firstText(result)).toBeFalsy();
    expect(firstText(result)).toBe(`answer: ${JSON.stringify(ADA)}`);
    expect(a.asked).toHaveLength(1);
    expect(a.asked[0]).toMatch(/Your name\?$/);
    // Asked once, then retried once with the answer.
    expect((await a.seen()).seen.filter((m) => m === 'tools/call ask')).toHaveLength(2);
  });
});

describe('(b) a v2 client pinned to 2026-07-28 → mcp serve --http → v1 (2025) servers', () => {
  it('relays progress', async () => {
    const client = await b.connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'long_slow', arguments: { seconds: 3, everyMs: 1000 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(firstText(result as never)).toMatch(/^done after \d+ progress notifications$/);
    expect(progress.length).toBeGreaterThan(0);
  });

  it("passes the client's cancel on to the server", async () => {
    const client = await b.connect();
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'long_sleep', arguments: { seconds: 60 } },
      { signal: abort.signal },
    );
    call.catch(() => {});
    const sleeps = async () => (await b.recorded()).filter((e) => e.tool === 'sleep');
    await expect.poll(async () => (await sleeps()).length, { timeout: 20_000, interval: 50 }).toBe(1);
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect
      .poll(async () => (await sleeps()).map((e) => e.event), { timeout: 10_000, interval: 50 })
      .toEqual(['call', 'cancelled']);
  });

  it("holds the 2025 server's mid-call elicitation, asks the client by input_required, and completes", async () => {
    const client = await b.connect();
    const result = await client.callTool(
      { name: 'writer_ask_person', arguments: { message: 'Your name?' } },
      { timeout: LONG_CALL_MS },
    );
    expect(firstText(result as never)).toBe(`answer: ${JSON.stringify(ADA)}`);
    expect(b.asked).toEqual(['[MCP server "writer", via ringfence] Your name?']);
  }, 200_000);

  it('a tool that requires a task: called plainly, and as a task by a client declaring the extension', async () => {
    const client = await b.connect();
    const plain = await client.callTool({ name: 'jobs_needs-task', arguments: {} });
    expect(firstText(plain as never)).toBe('done by task');

    const created = await modernPost(b.url, 'tools/call', { name: 'jobs_needs-task', arguments: {} });
    expect(created.result, JSON.stringify(created)).toMatchObject({ resultType: 'task' });
    const taskId = created.result!.taskId as string;
    expect(taskId).toMatch(/^rf-/);
    await expect
      .poll(async () => (await modernPost(b.url, 'tasks/get', { taskId })).result?.status, {
        timeout: 20_000,
      })
      .toBe('completed');
    const done = await modernPost(b.url, 'tasks/get', { taskId });
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'done by task' }] });
  });
});

describe('a 70 s call with progress, in both cells at once', () => {
  it(
    '(a) completes',
    async () => {
      const outcome = await longA;
      expect(outcome).toMatchObject({ ok: true, isError: false, text: 'done after 280 steps' });
      expect(outcome.ok && outcome.progress).toBeGreaterThan(10);
    },
    LONG_CALL_MS,
  );

  it(
    '(b) completes',
    async () => {
      const outcome = await longB;
      expect(outcome).toMatchObject({
        ok: true,
        isError: false,
        text: 'done after 14 progress notifications',
      });
      expect(outcome.ok && outcome.progress).toBeGreaterThanOrEqual(13);
    },
    LONG_CALL_MS,
  );
});
