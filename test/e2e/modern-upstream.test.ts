import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { modernImage, removeTestContainers } from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

/**
 * A 2026-07-28-only upstream (the v2 SDK's serveStdio with legacy requests refused, in its own
 * container) reached by a 2025 client through `mcp serve`: the gateway speaks 2026 to it and 2025
 * to the client, and decides exactly as it does for a 2025 upstream.
 */
describe('a 2026-only upstream behind mcp serve, for a 2025 client', () => {
  let home: string;
  let served: ServedClient;
  let changes = 0;
  const env = () => ({ RINGFENCE_HOME: home });

  beforeAll(async () => {
    home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'modern', '--image', await modernImage()], env());
    expect(added.code, added.stderr).toBe(0);
    served = await connectStdio(home);
    served.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
  });
  afterAll(async () => {
    await served?.close();
    await stopAll();
    await removeTestContainers();
  });

  it('lists and calls its tools; the verdict is kept with the registration and doctor shows it', async () => {
    expect((await served.client.listTools()).tools.map((t) => t.name)).toEqual([
      'modern_echo',
      'modern_slow',
      'modern_sleep',
      'modern_mutate',
      'modern_seen',
      'modern_ask',
    ]);
    expect(firstText(await served.client.callTool({ name: 'modern_echo', arguments: { text: 'hi' } }))).toBe(
      'hi',
    );
    // Probed once (server/discover) before it was spoken to.
    expect(
      JSON.parse(firstText(await served.client.callTool({ name: 'modern_seen', arguments: {} }))).discovers,
    ).toBe(1);
    const eras = JSON.parse(await readFile(join(home, 'upstream-eras.json'), 'utf8'));
    expect(eras.servers.modern).toMatchObject({
      era: 'modern',
      discover: { supportedVersions: ['2026-07-28'] },
    });
    const doctor = await ringfence(['doctor', '--json'], env());
    const check = (JSON.parse(doctor.stdout) as { checks: { id: string; summary: string }[] }).checks.find(
      (c) => c.id === 'upstream-eras',
    );
    expect(check?.summary).toMatch(/^modern: MCP 2026-07-28 \(modern, server\/discover; since /);
  });

  it('relays its progress to the client', async () => {
    const progress: number[] = [];
    const result = await served.client.callTool({ name: 'modern_slow', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(firstText(result)).toBe('done after 3 steps');
    // The relay passes at most one a 100 ms, and none once the answer is in: some, in order.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort());
    for (const step of progress) expect([1, 2, 3]).toContain(step);
  });

  it("passes the client's cancel on, and the server sees it", async () => {
    const abort = new AbortController();
    const call = served.client.callTool({ name: 'modern_sleep', arguments: {} }, undefined, {
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect
      .poll(
        async () =>
          JSON.parse(firstText(await served.client.callTool({ name: 'modern_seen', arguments: {} })))
            .cancelled,
        { timeout: 10_000, interval: 300 },
      )
      .toEqual(['sleep']);
  });

  it('a tool changed mid-session (list_changed on its listen stream) is withheld at once', async () => {
    await served.client.callTool({ name: 'modern_mutate', arguments: {} });
    await expect.poll(() => changes, { timeout: 20_000, interval: 200 }).toBeGreaterThan(0);
    expect((await served.client.listTools()).tools.map((t) => t.name)).not.toContain('modern_echo');
    await expect(served.client.callTool({ name: 'modern_echo', arguments: { text: 'x' } })).rejects.toThrow(
      /"modern_echo" is withheld \(modern\/echo\): its definition changed since it was pinned/,
    );
  });

  it('the next start connects from the kept verdict without probing', async () => {
    await served.close();
    served = await connectStdio(home);
    const seen = JSON.parse(firstText(await served.client.callTool({ name: 'modern_seen', arguments: {} })));
    expect(seen.discovers).toBe(0);
    expect(seen.seen[0]).toBe('tools/list');
  });
});
