// Long calls through the gateway, with the SDK's client over stdio and over --http, against a
// real server on loopback (test/fixtures/long-call-server.mjs): progress, cancel, timeouts, a
// server that dies or garbles its answer, and large images.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  listContainers,
  probeImage,
  removeTestContainers,
  uniqueName,
} from '../helpers/containers.js';
import {
  connectHttp,
  connectStdio,
  firstText,
  freshHome,
  serveHttp,
  startLongCallServer,
} from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll } from '../helpers/processes.js';

const TOKEN = 'e2e-long-calls-0123456789abcdef0123456789abcdef';
const MIB = 1024 * 1024;

interface Recorded {
  event: 'call' | 'cancelled';
  tool: string;
  token?: string | number | null;
  at: number;
}

async function recorded(file: string): Promise<Recorded[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Recorded);
}

async function auditEntries(home: string) {
  const text = await readFile(join(home, 'audit.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> });
}

/** `long` keeps the defaults (60 s without progress); `quick` allows 5 s without progress, 40 s in all. */
async function registered() {
  const home = await freshHome();
  const record = join(home, '..', 'record.jsonl');
  await writeFile(record, '');
  const server = await startLongCallServer(record);
  const env = { RINGFENCE_HOME: home };
  for (const [name, extra] of [
    ['long', []],
    ['quick', ['--call-timeout', '5', '--call-ceiling', '40']],
  ] as const) {
    const added = await ringfence(['mcp', 'add', name, '--url', server.url, ...extra], env);
    expect(added.code, added.stderr).toBe(0);
  }
  return { home, record, server };
}

for (const transport of ['stdio', 'http'] as const) {
  describe(`long calls through mcp serve (${transport}, real SDK client)`, () => {
    let setup: Awaited<ReturnType<typeof registered>>;
    let client: Client;
    const clientErrors: string[] = [];

    beforeAll(async () => {
      setup = await registered();
      if (transport === 'stdio') {
        client = (await connectStdio(setup.home)).client;
      } else {
        const gateway = await serveHttp(setup.home, TOKEN);
        client = await connectHttp(gateway.url, TOKEN);
      }
      client.onerror = (error) => clientErrors.push(error.message);
    });
    afterAll(async () => {
      await client?.close().catch(() => {});
      await stopAll();
    });

    it("relays progress to the client under its own token; the server only ever sees the gateway's", async () => {
      const progress: Progress[] = [];
      const result = await client.callTool(
        { name: 'long_slow', arguments: { seconds: 4, everyMs: 1000 } },
        undefined,
        {
          onprogress: (p) => progress.push(p),
        },
      );
      expect(result.isError).toBeFalsy();
      expect(firstText(result)).toMatch(/^done after \d+ progress notifications$/);
      // The SDK client calls onprogress only for the token it sent: these came back mapped.
      expect(progress.length).toBeGreaterThan(0);
      expect(progress[0]).toMatchObject({ progress: 1, message: 'step 1\\u{1B}[2J' });
      const calls = (await recorded(setup.record)).filter((r) => r.event === 'call' && r.tool === 'slow');
      expect(calls.at(-1)?.token).toMatch(/^rf-[0-9a-f]{32}$/);
    });

    it("drops a server's progress for tokens it was not given, even while another call gets its own", async () => {
      const slow: Progress[] = [];
      const forge: Progress[] = [];
      const [slowResult, forgeResult] = await Promise.all([
        client.callTool({ name: 'long_slow', arguments: { seconds: 3, everyMs: 1000 } }, undefined, {
          onprogress: (p) => slow.push(p),
        }),
        client.callTool({ name: 'long_forge', arguments: {} }, undefined, {
          onprogress: (p) => forge.push(p),
        }),
      ]);
      expect(firstText(forgeResult)).toBe('forged');
      expect(slowResult.isError).toBeFalsy();
      expect(forge).toEqual([]);
      expect(slow.length).toBeGreaterThan(0);
      expect(slow.some((p) => p.message === 'forged')).toBe(false);
      // Nothing forged reached the client under any token. (The SDK client may report "unknown
      // token" for a real last progress handled just after its answer: its own race, not ours.)
      expect(clientErrors.filter((e) => /forged/.test(e))).toEqual([]);
    });

    it("the client's cancel reaches the server within a second, and the result entry says so", async () => {
      const controller = new AbortController();
      const call = client.callTool({ name: 'long_sleep', arguments: { seconds: 60 } }, undefined, {
        signal: controller.signal,
      });
      call.catch(() => {});
      const started = () => recorded(setup.record).then((r) => r.filter((e) => e.tool === 'sleep'));
      await expect.poll(async () => (await started()).length, { timeout: 20_000, interval: 50 }).toBe(1);
      const abortedAt = Date.now();
      controller.abort('the person pressed stop');
      await expect(call).rejects.toThrow();
      await expect
        .poll(async () => (await started()).filter((e) => e.event === 'cancelled').length, {
          timeout: 20_000,
          interval: 20,
        })
        .toBe(1);
      const cancelled = (await started()).find((e) => e.event === 'cancelled')!;
      // The requirement is 1 s; this machine is shared and has 2 cores, so 3 s is allowed here.
      // Without the fix the server was never told (it slept the whole 60 s).
      expect(cancelled.at - abortedAt).toBeLessThan(3_000);
      await expect
        .poll(async () =>
          (await auditEntries(setup.home)).find(
            (e) => e.type === 'mcp.result' && e.refs.tool === 'sleep' && e.refs.cancelled === 'client',
          ),
        )
        .toMatchObject({ refs: { server: 'long', is_error: true, reason: 'cancelled by the client' } });
    });

    it('a call that sends progress outlives its server call timeout; one that does not is cancelled upstream', async () => {
      const progress: Progress[] = [];
      const kept = await client.callTool(
        { name: 'quick_slow', arguments: { seconds: 11, everyMs: 2000 } },
        undefined,
        {
          onprogress: (p) => progress.push(p),
        },
      );
      expect(kept.isError, firstText(kept)).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);

      const before = (await recorded(setup.record)).length;
      const dropped = await client.callTool({ name: 'quick_sleep', arguments: { seconds: 30 } });
      expect(dropped.isError).toBe(true);
      expect(firstText(dropped)).toMatch(
        /^ringfence: quick\/sleep timed out: no answer and no progress from quick for 5 s, so the call was cancelled\. If the tool needs longer, register the server again with a longer --call-timeout/,
      );
      await expect
        .poll(async () => (await recorded(setup.record)).slice(before).map((e) => `${e.event}:${e.tool}`))
        .toEqual(['call:sleep', 'cancelled:sleep']);
      const entry = (await auditEntries(setup.home)).findLast(
        (e) => e.type === 'mcp.result' && e.refs.server === 'quick',
      );
      expect(entry?.refs).toMatchObject({
        tool: 'sleep',
        cancelled: 'timeout',
        reason: 'timed out without progress',
      });
    });

    it('passes a 5 MiB image; withholds a larger one saying what was counted', async () => {
      const image = await client.callTool({ name: 'long_image', arguments: { mib: 5 } });
      expect(image.isError).toBeFalsy();
      const content = image.content as { type: string; data: string }[];
      expect(content[0]?.type).toBe('image');
      expect(Buffer.from(content[0]!.data, 'base64').length).toBe(5 * MIB);

      const big = await client.callTool({ name: 'long_image', arguments: { mib: 6.5 } });
      expect(big.isError).toBe(true);
      expect(firstText(big)).toMatch(
        /^ringfence withheld the result of long\/image: the result counts \d+ bytes \(6\.5 MiB\), over the 6291456 bytes \(6\.0 MiB\) cap for long \(counted: its JSON in UTF-8, with the base64 data of images, audio and embedded blobs at their decoded size\)\. A larger cap is set when the server is registered: .*--max-result-mb N/,
      );
    });

    it('a garbled answer stream fails the call at once, not after the timeout', async () => {
      for (const binary of [false, true]) {
        const startedAt = Date.now();
        const result = await client.callTool({ name: 'long_garble', arguments: { binary } });
        expect(result.isError).toBe(true);
        expect(firstText(result)).toMatch(
          /^ringfence: long\/garble failed: the server's answer is not a valid MCP event stream: it sent (an event whose data is not JSON|a line that is not an event field \(.*\)); the call was ended\. Check that the server is up; its last output is shown by: ringfence mcp ls --logs$/,
        );
        // The server keeps the stream open: only the watch ends it; the timeout would take 60 s.
        expect(Date.now() - startedAt).toBeLessThan(30_000);
      }
    });
  });
}

describe('a call longer than a minute (stdio)', () => {
  let setup: Awaited<ReturnType<typeof registered>>;
  let client: Client;
  beforeAll(async () => {
    setup = await registered();
    client = (await connectStdio(setup.home)).client;
  });
  afterAll(async () => {
    await client?.close().catch(() => {});
    await stopAll();
  });

  it('a 70 s call that sends progress succeeds with the default timeouts', async () => {
    const progress: Progress[] = [];
    const result = await client.callTool(
      { name: 'long_slow', arguments: { seconds: 70, everyMs: 5000 } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
        // As a client that honours progress does: its own 60 s timer restarts with each one.
        resetTimeoutOnProgress: true,
      },
    );
    expect(result.isError, firstText(result)).toBeFalsy();
    expect(firstText(result)).toBe('done after 14 progress notifications');
    expect(progress.length).toBeGreaterThanOrEqual(13);
  }, 150_000);
});

describe('a remote server killed with calls in flight', () => {
  let setup: Awaited<ReturnType<typeof registered>>;
  let client: Client;
  beforeAll(async () => {
    setup = await registered();
    client = (await connectStdio(setup.home)).client;
  });
  afterAll(async () => {
    await client?.close().catch(() => {});
    await stopAll();
  });

  it('fails each in-flight call within a second of the kill, saying what happened', async () => {
    const calls = [
      client.callTool({ name: 'long_sleep', arguments: { seconds: 60 } }),
      client.callTool({ name: 'long_slow', arguments: { seconds: 60, everyMs: 1000 } }, undefined, {
        onprogress: () => {},
        resetTimeoutOnProgress: true,
      }),
    ].map((call) => call.then((result) => ({ result, at: Date.now() })));
    await expect
      .poll(async () => (await recorded(setup.record)).filter((e) => e.event === 'call').length, {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(2);
    const killedAt = Date.now();
    setup.server.child.kill('SIGKILL');
    for (const { result, at } of await Promise.all(calls)) {
      expect(result.isError).toBe(true);
      expect(firstText(result)).toMatch(
        /^ringfence: long\/(sleep|slow) failed: the connection to the server dropped \(.+\) before it answered; the call was ended\. Check that the server is up; its last output is shown by: ringfence mcp ls --logs$/,
      );
      // The requirement is 1 s; 3 s is allowed on this shared 2-core machine. Before: 60 s.
      expect(at - killedAt).toBeLessThan(3_000);
    }
    const next = await client.callTool({ name: 'long_sleep', arguments: { seconds: 1 } });
    expect(firstText(next)).toMatch(
      /^ringfence: long\/sleep failed: the server could not be reached \(ECONNREFUSED\)/,
    );
  });
});

describe('a contained server whose container dies with a call in flight', () => {
  let home: string;
  let client: Client;
  const session = uniqueName('exit');
  beforeAll(async () => {
    home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'box', '--image', await probeImage()], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
    client = (await connectStdio(home, {}, {}, { args: ['--session', session] })).client;
  });
  afterAll(async () => {
    await client?.close().catch(() => {});
    await removeTestContainers();
  });

  it('fails the call within a second of the exit, naming it and where the logs are', async () => {
    const call = client
      .callTool({ name: 'box_probe', arguments: { sleepMs: 60_000 } })
      .then((result) => ({ result, at: Date.now() }));
    const decided = async () =>
      (await auditEntries(home)).some(
        (e) => e.type === 'mcp.decision' && e.refs.phase === 'call' && e.refs.allowed,
      );
    await expect.poll(decided, { timeout: 20_000, interval: 50 }).toBe(true);
    const [box] = await listContainers(docker, {
      filters: { label: [`ringfence.session=${session}`, 'ringfence.server=box', 'ringfence.role=server'] },
    });
    expect(box).toBeDefined();
    const killedAt = Date.now();
    await docker.getContainer(box!.Id).kill();
    const { result, at } = await call;
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /^ringfence: box\/probe failed: the server stopped before it answered: its container exited with code 137\. Check that the server is up; its last output is shown by: ringfence mcp ls --logs$/,
    );
    // The requirement is 1 s; 3 s is allowed on this shared 2-core machine.
    expect(at - killedAt).toBeLessThan(3_000);
  });
});

describe("the organisation policy's cap on a call's time", () => {
  let setup: Awaited<ReturnType<typeof registered>>;
  let client: Client;
  beforeAll(async () => {
    setup = await registered();
    const dir = join(setup.home, '..');
    const policyDir = await mkdtemp(join(dir, 'etc-'));
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      policyDocument({ mcp: [{ server: 'long', max_call_seconds: 3 }] }),
      'cap',
    );
    const env = { RINGFENCE_HOME: setup.home, RINGFENCE_POLICY_DIR: policyDir };
    await install(policy, org, env);
    client = (await connectStdio(setup.home, { RINGFENCE_POLICY_DIR: policyDir })).client;
  });
  afterAll(async () => {
    await client?.close().catch(() => {});
    await stopAll();
  });

  it('ends a call at the policy ceiling, progress or not, and names the policy', async () => {
    const result = await client.callTool(
      { name: 'long_slow', arguments: { seconds: 30, everyMs: 500 } },
      undefined,
      {
        onprogress: () => {},
        resetTimeoutOnProgress: true,
      },
    );
    expect(result.isError).toBe(true);
    expect(firstText(result)).toBe(
      'ringfence: long/slow timed out: the call ran for 3 s, the longest the organisation policy (mcp[].max_call_seconds for long) allows, so it was cancelled. Ask your policy admin if the tool needs longer.',
    );
    await expect
      .poll(async () => (await recorded(setup.record)).map((e) => `${e.event}:${e.tool}`))
      .toEqual(['call:slow', 'cancelled:slow']);
    const entry = (await auditEntries(setup.home)).findLast((e) => e.type === 'mcp.result');
    expect(entry?.refs).toMatchObject({
      tool: 'slow',
      cancelled: 'timeout',
      reason: 'reached the call ceiling',
    });
    // Another server keeps its own ceiling.
    const quick = await client.callTool({ name: 'quick_slow', arguments: { seconds: 4, everyMs: 1000 } });
    expect(quick.isError, firstText(quick)).toBeFalsy();
  });
});
